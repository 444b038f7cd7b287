# prefsd: common tasks. `make run` sets up and runs the service, `make test` runs every test.
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
DBUS_SERVICES_DIR ?= $(PREFIX)/share/dbus-1/services
SYSTEMD_USER_DIR ?= $(PREFIX)/share/systemd/user
APPLICATIONS_DIR ?= $(PREFIX)/share/applications
PORTALS_DIR ?= $(PREFIX)/share/xdg-desktop-portal/portals
# The GSettings backend (a GIO module). A user install is found through GIO_EXTRA_MODULES
# (README: "GSettings programs"); for every user, install into GLib's own directory:
# make install GIO_MODULE_DIR=`pkg-config --variable=giomoduledir gio-2.0`
GIO_MODULE_DIR ?= $(PREFIX)/lib/gio/modules
SWIFT ?= swift

.PHONY: all deps build run test bench install uninstall clean

all: build

deps:
	scripts/install-dependencies

# The GSettings backend (libgioprefsd.so) is Embedded Swift, built by its own script.
build: deps
	$(SWIFT) build -c release
	scripts/build-gio-module

run: deps
	scripts/run

# Each test target runs in a process of its own, one test at a time (scripts/run-tests
# says why), and the run ends with one line: "N passed, M failed".
test: deps
	$(SWIFT) build --build-tests
	scripts/build-gio-module
	SWIFT=$(SWIFT) scripts/run-tests

# The benchmark (not part of `make test`): prefsd beside the bus's Ping floor and dconf-service.
bench: deps
	$(SWIFT) build -c release --product prefsd
	scripts/build-gio-module
	$(SWIFT) run -c release prefs-bench $(BENCH_FLAGS)

install: build
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(DBUS_SERVICES_DIR)" "$(DESTDIR)$(SYSTEMD_USER_DIR)" "$(DESTDIR)$(PORTALS_DIR)" "$(DESTDIR)$(GIO_MODULE_DIR)" "$(DESTDIR)$(APPLICATIONS_DIR)"
	install -s -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefsd" "$(DESTDIR)$(BINDIR)/prefsd"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefs" "$(DESTDIR)$(BINDIR)/prefs"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefsd-portal"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefs-settings" "$(DESTDIR)$(BINDIR)/prefs-settings"
	sed 's|@bindir@|$(BINDIR)|g' dbus/org.freedesktop.impl.portal.desktop.prefsd.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service"
	install -m 0644 dbus/prefsd.portal "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal"
	sed 's|@bindir@|$(BINDIR)|g' data/io.github.prefsd.Settings.desktop > "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop"
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.prefsd.Preferences1.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service"
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.prefsd.Sandboxed1.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Sandboxed1.service"
	sed 's|@bindir@|$(BINDIR)|g' dbus/prefsd.service > "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service"
	install -m 0644 .build/gio-module/libgioprefsd.so "$(DESTDIR)$(GIO_MODULE_DIR)/libgioprefsd.so"
	@# GIO's module cache names the extension point each module implements.
	if [ -z "$(DESTDIR)" ] && command -v gio-querymodules >/dev/null; then gio-querymodules "$(GIO_MODULE_DIR)"; fi
	@echo "installed prefsd, prefs, prefsd-portal and prefs-settings in $(BINDIR); the session bus starts prefsd on first use"
	@echo "installed the GSettings backend in $(GIO_MODULE_DIR); GSETTINGS_BACKEND=prefsd selects it (README: GSettings programs)"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/prefsd" "$(DESTDIR)$(BINDIR)/prefs" "$(DESTDIR)$(BINDIR)/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefs-settings" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service" "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal" \
	      "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Sandboxed1.service" \
	      "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service" \
	      "$(DESTDIR)$(GIO_MODULE_DIR)/libgioprefsd.so"
	if [ -z "$(DESTDIR)" ] && command -v gio-querymodules >/dev/null && [ -d "$(GIO_MODULE_DIR)" ]; then gio-querymodules "$(GIO_MODULE_DIR)"; fi

clean:
	rm -rf .build
