"""A stand-in for systemd's D-Bus API on a private bus, for testing the systemd_unit check where no
systemd runs as PID 1: it owns org.freedesktop.systemd1 and answers Manager.LoadUnit and each unit's
Properties.Get from a JSON file the test rewrites ({"unit": {"ActiveState": ..., ...}}). A unit
the file does not list is not-found, as systemd answers for an unknown name.
Usage: fake_systemd.py BUS-ADDRESS STATE-FILE   (prints "ready" once it owns the name)"""
import json
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

address, state_path = sys.argv[1], sys.argv[2]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)
owned = dbus.service.BusName("org.freedesktop.systemd1", bus)

TYPES = {"LoadState": dbus.String, "ActiveState": dbus.String, "SubState": dbus.String, "Result": dbus.String,
         "NRestarts": dbus.UInt32, "StateChangeTimestamp": dbus.UInt64}
UNKNOWN = {"LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead", "Result": "success",
           "NRestarts": 0, "StateChangeTimestamp": 0}


def escape(name):
    """systemd's object path escaping: every byte but [A-Za-z0-9] (and a leading digit) as _xx."""
    return "".join(c if c.isascii() and (c.isalpha() or (c.isdigit() and i > 0)) else "_%02x" % ord(c)
                   for i, c in enumerate(name))


class Unit(dbus.service.Object):
    def __init__(self, name):
        super().__init__(bus, "/org/freedesktop/systemd1/unit/" + escape(name))
        self.name = name

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        with open(state_path) as handle:
            unit = json.load(handle).get(self.name, UNKNOWN)
        if prop not in TYPES:
            raise dbus.exceptions.DBusException("org.freedesktop.DBus.Error.UnknownProperty", prop)
        return TYPES[prop](unit.get(prop, UNKNOWN[prop]), variant_level=1)


units = {}


class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="s", out_signature="o")
    def LoadUnit(self, name):
        if name not in units:
            units[name] = Unit(name)
        return dbus.ObjectPath(units[name].__dbus_object_path__)


manager = Manager(bus, "/org/freedesktop/systemd1")
print("ready", flush=True)
GLib.MainLoop().run()
