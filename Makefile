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
MANDIR ?= $(PREFIX)/share/man
BASH_COMPLETIONS_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETIONS_DIR ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETIONS_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
SWIFT ?= swift
export SWIFT
# Copies of the two pkg-config files whose C flags SwiftPM refuses, without those flags
# (scripts/pkg-config-shims says which and why): no "prohibited flag(s)" warnings.
export PKG_CONFIG_PATH := $(CURDIR)/.build/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))

.PHONY: all deps build man docs run test lint format bench install install-files install-man uninstall uninstall-man deb test-packages clean

all: build

# Every package any target needs; each target below asks only for its own set
# (scripts/install-dependencies run|build|docs|test|bench|deb).
deps:
	scripts/install-dependencies all

# The GSettings backend (libgioprefsd.so) is Embedded Swift, built by its own script; the
# man pages and shell completions come from the ArgumentParser definitions (scripts/build-man).
build:
	scripts/install-dependencies build
	scripts/pkg-config-shims
	$(SWIFT) build -c release
	scripts/build-gio-module
	scripts/build-man

# Man pages into .build/man, completions into .build/completions.
man:
	scripts/install-dependencies build
	scripts/pkg-config-shims
	scripts/build-man

# DocC for Preferences, PreferencesProxy and PreferencesClient, for static hosting, into
# .build/docs/<Module>; fails on any DocC warning.
docs:
	scripts/install-dependencies docs
	scripts/pkg-config-shims
	scripts/build-docs

# prefsd in the foreground (on a private bus when there is no session bus), with the
# `export` lines for another terminal.
run:
	scripts/install-dependencies run
	scripts/pkg-config-shims
	scripts/run

# Each test target runs in a process of its own, one test at a time (scripts/run-tests
# says why), then the script tests in scripts/tests (building again, formatting, make run,
# installed man pages, the API documentation with DocC's warnings as errors, ICU's data, the
# Debian packages in a clean root: as root, with Debian's mirror reachable); the run ends with one line: "N passed, M failed". The formatting test fails
# until the tree is formatted (`make format`).
test:
	scripts/install-dependencies test
	scripts/pkg-config-shims
	$(SWIFT) build --build-tests
	scripts/build-gio-module
	scripts/run-tests

# swift-format's findings under .swift-format (`make format` applies its fixes).
lint:
	$(SWIFT) format lint --strict --parallel --recursive Package.swift Plugins Sources Tests

format:
	scripts/format

# The benchmark (not part of `make test`): prefsd beside the bus's Ping floor and dconf-service.
bench:
	scripts/install-dependencies bench
	scripts/pkg-config-shims
	$(SWIFT) build -c release --product prefsd
	scripts/build-gio-module
	$(SWIFT) run -c release prefs-bench $(BENCH_FLAGS)

install: build
	$(MAKE) --no-print-directory install-files

# What `make install` installs, from a build already made (debian/rules uses it with
# DESTDIR and PREFIX=/usr).
install-files:
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(DBUS_SERVICES_DIR)" "$(DESTDIR)$(SYSTEMD_USER_DIR)" "$(DESTDIR)$(PORTALS_DIR)" "$(DESTDIR)$(GIO_MODULE_DIR)" "$(DESTDIR)$(APPLICATIONS_DIR)"
	@# One --show-bin-path for the four binaries: each swift invocation loads the package again.
	bin="$$($(SWIFT) build -c release --show-bin-path 2>/dev/null)" && \
	install -s -m 0755 "$$bin/prefsd" "$(DESTDIR)$(BINDIR)/prefsd" && \
	install -m 0755 "$$bin/prefs" "$(DESTDIR)$(BINDIR)/prefs" && \
	install -m 0755 "$$bin/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefsd-portal" && \
	install -m 0755 "$$bin/prefs-settings" "$(DESTDIR)$(BINDIR)/prefs-settings"
	sed 's|@bindir@|$(BINDIR)|g' dbus/org.freedesktop.impl.portal.desktop.prefsd.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service"
	install -m 0644 dbus/prefsd.portal "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal"
	sed 's|@bindir@|$(BINDIR)|g' data/io.github.prefsd.Settings.desktop > "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop"
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.prefsd.Preferences1.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service"
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.prefsd.Sandboxed1.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Sandboxed1.service"
	sed 's|@bindir@|$(BINDIR)|g' dbus/prefsd.service > "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service"
	install -m 0644 .build/gio-module/libgioprefsd.so "$(DESTDIR)$(GIO_MODULE_DIR)/libgioprefsd.so"
	@# GIO's module cache names the extension point each module implements.
	if [ -z "$(DESTDIR)" ] && command -v gio-querymodules >/dev/null; then gio-querymodules "$(GIO_MODULE_DIR)"; fi
	$(MAKE) --no-print-directory install-man
	@echo "installed prefsd, prefs, prefsd-portal and prefs-settings in $(BINDIR); the session bus starts prefsd on first use"
	@echo "installed the GSettings backend in $(GIO_MODULE_DIR); GSETTINGS_BACKEND=prefsd selects it (README: GSettings programs)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "$(BINDIR) is not on PATH: export PATH=\"$(BINDIR):\$$PATH\" (man finds the pages through it too)";; esac

# The man pages and completions scripts/build-man made (`make man`), without building.
install-man:
	install -d "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(BASH_COMPLETIONS_DIR)" "$(DESTDIR)$(ZSH_COMPLETIONS_DIR)" "$(DESTDIR)$(FISH_COMPLETIONS_DIR)"
	install -m 0644 .build/man/prefs.1 .build/man/prefs-settings.1 "$(DESTDIR)$(MANDIR)/man1/"
	install -m 0644 .build/man/prefsd.8 "$(DESTDIR)$(MANDIR)/man8/"
	install -m 0644 .build/completions/prefs.bash "$(DESTDIR)$(BASH_COMPLETIONS_DIR)/prefs"
	install -m 0644 .build/completions/_prefs "$(DESTDIR)$(ZSH_COMPLETIONS_DIR)/_prefs"
	install -m 0644 .build/completions/prefs.fish "$(DESTDIR)$(FISH_COMPLETIONS_DIR)/prefs.fish"
	@echo "installed prefs(1), prefs-settings(1) and prefsd(8) in $(MANDIR), completions for bash, zsh and fish"

# Debian binary packages (debian/, dpkg-buildpackage) into .build/deb: prefsd,
# prefsd-gsettings-backend, prefs-settings and xdg-desktop-portal-prefsd. Needs swift on PATH;
# debian/changelog's version must be PrefsdVersion.current (scripts/deb-version checks).
deb:
	scripts/install-dependencies build deb
	scripts/deb-version --check
	scripts/build-deb

# The packages' test alone (one of `make test`'s script tests, as root): built as `make deb`
# builds them, linted, installed in a clean Debian 12 root (mmdebstrap), used there as a
# user would, upgraded from an earlier version and purged.
test-packages:
	scripts/install-dependencies build deb
	scripts/tests/packages

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/prefsd" "$(DESTDIR)$(BINDIR)/prefs" "$(DESTDIR)$(BINDIR)/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefs-settings" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service" "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal" \
	      "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Sandboxed1.service" \
	      "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service" \
	      "$(DESTDIR)$(GIO_MODULE_DIR)/libgioprefsd.so"
	$(MAKE) --no-print-directory uninstall-man
	if [ -z "$(DESTDIR)" ] && command -v gio-querymodules >/dev/null && [ -d "$(GIO_MODULE_DIR)" ]; then gio-querymodules "$(GIO_MODULE_DIR)"; fi

uninstall-man:
	rm -f "$(DESTDIR)$(MANDIR)/man1/prefs.1" "$(DESTDIR)$(MANDIR)/man1/prefs-settings.1" "$(DESTDIR)$(MANDIR)/man8/prefsd.8" \
	      "$(DESTDIR)$(BASH_COMPLETIONS_DIR)/prefs" "$(DESTDIR)$(ZSH_COMPLETIONS_DIR)/_prefs" "$(DESTDIR)$(FISH_COMPLETIONS_DIR)/prefs.fish"

clean:
	rm -rf .build
