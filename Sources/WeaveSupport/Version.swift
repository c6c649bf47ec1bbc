/// The version of this package's programs (weave-healthd, weave-health), written once: a release's
/// (`0.2.0`, tagged `v0.2.0`), or between releases the next one's with `-dev` (Debian's `~dev`,
/// which sorts before the release). `Scripts/check-release` keeps it true to the tags.
package enum WeaveVersion {
    package static let text = "0.3.0-dev"
}
