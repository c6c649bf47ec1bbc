# Sourced by the other scripts: puts the Swift toolchain on PATH and moves to the package root.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Builds a release executable and prints its path (build output goes to stderr). The Swift runtime
# is linked in statically, and lld packs the relocations, exports no symbols and folds identical
# code: weave-healthd's idle RSS drops from 18 MiB (dynamic, no Foundation) to 15 MiB; the functions
# the daemon runs are placed together (Scripts/order-functions), which brings it to 13 MiB, below
# prometheus-node-exporter's (Benchmarks/README.md).
# Usage: release_build PRODUCT [swift build options, such as --package-path Benchmarks]
release_build() {
    local product=$1
    shift
    local flags=(-c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic
                 -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --icf=all "$@")
    if [ "$product" = weave-healthd ] && [ -f Scripts/weave-healthd.order ]; then
        # Names missing from the binary (the file is older than the code) are skipped without a word.
        flags+=(-Xlinker "--symbol-ordering-file=$PWD/Scripts/weave-healthd.order" -Xlinker --no-warn-symbol-ordering)
        # SwiftPM does not know the linker reads the list: a binary older than it is removed, so it is linked again.
        local binary
        binary="$(swift build "${flags[@]}" --show-bin-path)/$product"
        if [ Scripts/weave-healthd.order -nt "$binary" ]; then rm -f "$binary"; fi
    fi
    # `|| return`: inside $(…) errexit does not apply, and a failed build must not print a path.
    swift build "${flags[@]}" --product "$product" >&2 || return
    echo "$(swift build "${flags[@]}" --show-bin-path)/$product"
}

# Builds the example service (Examples/Orders, debug) and prints its path (build output to stderr).
# Its scratch folder is the Hummingbird adapter's, so Hummingbird and NIO build once for both.
example_build() {
    local flags=(--package-path Examples/Orders --scratch-path .build-integrations)
    swift build "${flags[@]}" --product Orders >&2 || return
    echo "$(swift build "${flags[@]}" --show-bin-path)/Orders"
}
