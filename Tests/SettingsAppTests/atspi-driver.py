#!/usr/bin/python3
"""Drives the Settings window (prefs-settings) through AT-SPI, as a screen reader would.

Usage (one step per run; exit 0 when the step succeeded, 1 with what was seen otherwise):
  atspi-driver.py wait ROLE NAME [--checked yes|no] [--pressed yes|no] [--text TEXT] [--sensitive yes|no] [--visible yes|no]
  atspi-driver.py act ROLE NAME ACTION        e.g. act 'check box' 'Dark style' toggle
  atspi-driver.py set-text ROLE NAME TEXT     replaces an editable text's contents
  atspi-driver.py wait-label-containing TEXT  a label whose text contains TEXT
  atspi-driver.py wait-labels-in-order TEXT... labels containing each TEXT, each one after
                                              the one before (from the top of the window)
  atspi-driver.py wait-gone ROLE NAME         no such widget shown any more (GTK drops hidden
                                              widgets from the accessible tree)
Every step waits up to --timeout seconds (default 20) for the widget to be there and to
match. ROLE and NAME are AT-SPI's role name and accessible name ('check box', 'Dark style').
"""
import argparse
import sys
import time

import pyatspi

APPLICATION = "prefs-settings"


def application():
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.name == APPLICATION:
            return app
    return None


def walk(node, depth=0):
    if node is None or depth > 60:
        return
    yield node
    for index in range(node.childCount):
        yield from walk(node.getChildAtIndex(index), depth + 1)


def text_of(node):
    try:
        text = node.queryText()
        return text.getText(0, text.characterCount)
    except NotImplementedError:
        return None


def describe(node):
    states = node.getState()
    return "%s %r text=%r checked=%s pressed=%s sensitive=%s visible=%s" % (
        node.getRoleName(), node.name, text_of(node), states.contains(pyatspi.STATE_CHECKED),
        states.contains(pyatspi.STATE_PRESSED),
        states.contains(pyatspi.STATE_SENSITIVE), states.contains(pyatspi.STATE_VISIBLE))


def matches(node, role, name):
    return node.getRoleName() == role and node.name == name


def find(role, name, timeout, condition=lambda node: True):
    """The first node of that role and name meeting condition, waiting for it; or exits 1."""
    deadline = time.monotonic() + timeout
    seen = []
    while True:
        app = application()
        seen = []
        if app is not None:
            for node in walk(app):
                if matches(node, role, name):
                    if condition(node):
                        return node
                    seen.append(describe(node))
        if time.monotonic() > deadline:
            if app is None:
                print("no application named %r on the accessibility bus" % APPLICATION)
            else:
                print("no %s %r as expected; seen: %s" % (role, name, seen or "none of that role and name"))
            sys.exit(1)
        time.sleep(0.1)


def yes(value):
    return value == "yes"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=20)
    commands = parser.add_subparsers(dest="command", required=True)
    wait = commands.add_parser("wait")
    wait.add_argument("role")
    wait.add_argument("name")
    wait.add_argument("--checked", choices=["yes", "no"])
    wait.add_argument("--pressed", choices=["yes", "no"])
    wait.add_argument("--text")
    wait.add_argument("--sensitive", choices=["yes", "no"])
    wait.add_argument("--visible", choices=["yes", "no"])
    act = commands.add_parser("act")
    act.add_argument("role")
    act.add_argument("name")
    act.add_argument("action")
    set_text = commands.add_parser("set-text")
    set_text.add_argument("role")
    set_text.add_argument("name")
    set_text.add_argument("text")
    label = commands.add_parser("wait-label-containing")
    label.add_argument("text")
    in_order = commands.add_parser("wait-labels-in-order")
    in_order.add_argument("texts", nargs="+")
    gone = commands.add_parser("wait-gone")
    gone.add_argument("role")
    gone.add_argument("name")
    names = commands.add_parser("wait-names")
    names.add_argument("role")
    names.add_argument("names", nargs="*")
    names.add_argument("--within", help="only under the widget of this accessible name")
    commands.add_parser("dump")
    arguments = parser.parse_args()

    if arguments.command == "wait":
        def condition(node):
            states = node.getState()
            if arguments.checked is not None and states.contains(pyatspi.STATE_CHECKED) != yes(arguments.checked):
                return False
            if arguments.pressed is not None and states.contains(pyatspi.STATE_PRESSED) != yes(arguments.pressed):
                return False
            if arguments.sensitive is not None and states.contains(pyatspi.STATE_SENSITIVE) != yes(arguments.sensitive):
                return False
            if arguments.visible is not None and states.contains(pyatspi.STATE_VISIBLE) != yes(arguments.visible):
                return False
            if arguments.text is not None and text_of(node) != arguments.text:
                return False
            return True
        print(describe(find(arguments.role, arguments.name, arguments.timeout, condition)))
    elif arguments.command == "act":
        node = find(arguments.role, arguments.name, arguments.timeout)
        action = node.queryAction()
        names = [action.getName(index) for index in range(action.nActions)]
        if arguments.action not in names:
            print("%s has no action %r, only %s" % (describe(node), arguments.action, names))
            sys.exit(1)
        action.doAction(names.index(arguments.action))
        print("did %s on %s" % (arguments.action, describe(node)))
    elif arguments.command == "set-text":
        node = find(arguments.role, arguments.name, arguments.timeout)
        if not node.queryEditableText().setTextContents(arguments.text):
            print("%s refused the text" % describe(node))
            sys.exit(1)
        print("set text of %s" % describe(node))
    elif arguments.command == "wait-gone":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            if app is None:
                print("no application named %r on the accessibility bus" % APPLICATION)
                sys.exit(1)
            found = [describe(node) for node in walk(app) if matches(node, arguments.role, arguments.name)]
            if not found:
                print("no %s %r shown" % (arguments.role, arguments.name))
                return
            if time.monotonic() > deadline:
                print("still shown: %s" % found)
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "wait-names":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            roots = [app] if app is not None else []
            if arguments.within is not None:
                roots = [node for root in roots for node in walk(root) if node.name == arguments.within]
            found = [node.name for root in roots for node in walk(root) if node.getRoleName() == arguments.role
                     and node.getState().contains(pyatspi.STATE_VISIBLE)]
            if found == arguments.names:
                print("exactly: %s" % found)
                return
            if time.monotonic() > deadline:
                print("the %s widgets shown are %s" % (arguments.role, found))
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "dump":
        app = application()
        for node in walk(app):
            print(describe(node))
    elif arguments.command == "wait-labels-in-order":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            labels = [text_of(node) or node.name or "" for node in walk(app)
                      if node.getRoleName() == "label"] if app is not None else []
            # Each text in a label after the one the text before it was found in.
            positions = []
            for wanted in arguments.texts:
                start = positions[-1] + 1 if positions else 0
                found = [index for index in range(start, len(labels)) if wanted in labels[index]]
                if not found:
                    break
                positions.append(found[0])
            if len(positions) == len(arguments.texts):
                print("in order: %s" % [labels[index] for index in positions])
                return
            if time.monotonic() > deadline:
                print("not in that order; labels seen: %s" % [text for text in labels if text])
                sys.exit(1)
            time.sleep(0.1)
    elif arguments.command == "wait-label-containing":
        deadline = time.monotonic() + arguments.timeout
        while True:
            app = application()
            labels = [node for node in walk(app)] if app is not None else []
            for node in labels:
                if node.getRoleName() == "label" and arguments.text in (text_of(node) or node.name or ""):
                    print(describe(node))
                    return
            if time.monotonic() > deadline:
                print("no label containing %r" % arguments.text)
                sys.exit(1)
            time.sleep(0.1)


if __name__ == "__main__":
    main()
