# prefsd: common tasks. `make run` sets up and runs the service, `make test` runs every test.
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
DBUS_SERVICES_DIR ?= $(PREFIX)/share/dbus-1/services
SYSTEMD_USER_DIR ?= $(PREFIX)/share/systemd/user
APPLICATIONS_DIR ?= $(PREFIX)/share/applications
PORTALS_DIR ?= $(PREFIX)/share/xdg-desktop-portal/portals
SWIFT ?= swift

.PHONY: all deps build run test bench install uninstall clean

all: build

deps:
	scripts/install-dependencies

build: deps
	$(SWIFT) build -c release

run: deps
	scripts/run

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The benchmark (not part of `make test`): prefsd beside the bus's Ping floor and dconf-service.
bench: deps
	$(SWIFT) build -c release --product prefsd
	$(SWIFT) run -c release prefs-bench $(BENCH_FLAGS)

install: build
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(DBUS_SERVICES_DIR)" "$(DESTDIR)$(SYSTEMD_USER_DIR)" "$(DESTDIR)$(PORTALS_DIR)" "$(DESTDIR)$(APPLICATIONS_DIR)"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefsd" "$(DESTDIR)$(BINDIR)/prefsd"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefs" "$(DESTDIR)$(BINDIR)/prefs"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefsd-portal"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/prefs-settings" "$(DESTDIR)$(BINDIR)/prefs-settings"
	sed 's|@bindir@|$(BINDIR)|g' dbus/org.freedesktop.impl.portal.desktop.prefsd.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service"
	install -m 0644 dbus/prefsd.portal "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal"
	sed 's|@bindir@|$(BINDIR)|g' data/io.github.prefsd.Settings.desktop > "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop"
	sed 's|@bindir@|$(BINDIR)|g' dbus/io.github.prefsd.Preferences1.service > "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service"
	sed 's|@bindir@|$(BINDIR)|g' dbus/prefsd.service > "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service"
	@echo "installed prefsd, prefs, prefsd-portal and prefs-settings in $(BINDIR); the session bus starts prefsd on first use"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/prefsd" "$(DESTDIR)$(BINDIR)/prefs" "$(DESTDIR)$(BINDIR)/prefsd-portal" "$(DESTDIR)$(BINDIR)/prefs-settings" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.impl.portal.desktop.prefsd.service" "$(DESTDIR)$(PORTALS_DIR)/prefsd.portal" \
	      "$(DESTDIR)$(APPLICATIONS_DIR)/io.github.prefsd.Settings.desktop" \
	      "$(DESTDIR)$(DBUS_SERVICES_DIR)/io.github.prefsd.Preferences1.service" \
	      "$(DESTDIR)$(SYSTEMD_USER_DIR)/prefsd.service"

clean:
	rm -rf .build
