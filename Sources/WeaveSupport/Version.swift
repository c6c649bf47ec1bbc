/// The version of this package's programs (weave-healthd, weave-health), written once.
package enum WeaveVersion {
    package static let text = "0.2.0"
}
