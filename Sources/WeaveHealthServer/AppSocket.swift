/// The convention by which an application's endpoint (WeaveAppEndpoint) and weave-healthd find each
/// other: a Unix socket `<name>.sock` in one directory. Both sides take it from here, so every name
/// the endpoint makes is one the daemon accepts.
package enum AppSocket {
    /// Where applications put their sockets, and where the daemon looks, by default.
    package static let defaultDirectory = "/run/weave/apps"
    package static let suffix = ".sock"
    /// The longest name, in bytes (ASCII: as many characters).
    package static let maxNameBytes = 128

    /// Whether `name` can be an application's name, and so a socket's file name and an `app` label:
    /// ASCII letters, digits, `-`, `_` and `.`, not starting with `.`, 1 to 128 bytes.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.first != "." && name.utf8.count <= maxNameBytes && name.unicodeScalars.allSatisfy(isNameScalar)
    }

    /// `name` made valid: other characters, and a leading `.`, become `_`; cut to 128 bytes; `_` when empty.
    package static func name(for name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars.prefix(maxNameBytes) {
            out.unicodeScalars.append(isNameScalar(scalar) && !(scalar == "." && out.isEmpty) ? scalar : "_")
        }
        return out.isEmpty ? "_" : out
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "-" || scalar == "_" || scalar == "."
    }
}
