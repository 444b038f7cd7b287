#ifndef PREFSD_CGTK_SHIM_H
#define PREFSD_CGTK_SHIM_H

#include <adwaita.h>
#include <glib-unix.h>
#include <pthread.h>
#include <signal.h>

/* GTK's type-checking casts (GTK_WIDGET(), G_OBJECT() …) and variadic functions do not
 * import into Swift; these wrap the few the Swift layer needs. Only module Gtk uses them. */

static inline GtkWidget *cgtk_widget(gpointer object) { return GTK_WIDGET(object); }
static inline GObject *cgtk_object(gpointer object) { return G_OBJECT(object); }

/* The accessible name screen readers announce. */
static inline void cgtk_accessible_set_label(gpointer widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

/* The accessible description (read after the name). */
static inline void cgtk_accessible_set_description(gpointer widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

/* Adds a CSS class to a widget (G_TYPE checks included). */
static inline void cgtk_add_css_class(gpointer widget, const char *name) {
    gtk_widget_add_css_class(GTK_WIDGET(widget), name);
}

/* Sets a string property by name (g_object_set is variadic). */
static inline void cgtk_set_string_property(gpointer object, const char *name, const char *value) {
    g_object_set(G_OBJECT(object), name, value, NULL);
}

static gboolean cgtk_quit_application(gpointer application) {
    g_application_quit(G_APPLICATION(application));
    return G_SOURCE_CONTINUE;
}

/* Quits `application` on SIGTERM, SIGINT and SIGHUP, unblocking them in the calling (main)
 * thread: a process started by one whose thread blocked them inherits the mask and would
 * otherwise never see them. */
static inline void cgtk_quit_on_termination_signals(gpointer application) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    g_unix_signal_add(SIGTERM, cgtk_quit_application, application);
    g_unix_signal_add(SIGINT, cgtk_quit_application, application);
    g_unix_signal_add(SIGHUP, cgtk_quit_application, application);
}

#endif
