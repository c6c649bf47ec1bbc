# Sourced by the other scripts: puts the Swift toolchain on PATH and moves to the package root.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# SwiftPM keeps the build plan of a package (this one, and the packages that build it as a
# dependency by path: the integrations, the example, the benchmarks) and does not always notice a
# source or test file added, moved or removed ("missing inputs", or a new test file left out). So a
# scratch folder's plan is dropped whenever the list of this package's Swift files differs from the
# one it was made with; its build products stay.
sources_key=$(find Sources Tests -name '*.swift' | LC_ALL=C sort | md5sum | cut -c1-32)
for scratch in .build .build-* Benchmarks/.build-static; do
    [ -d "$scratch" ] || continue
    if [ "$(cat "$scratch/.weave-sources-key" 2>/dev/null)" != "$sources_key" ]; then
        rm -f "$scratch"/*/*/description.json "$scratch"/*.yaml
        echo "$sources_key" > "$scratch/.weave-sources-key"
    fi
done

# Builds a release executable and prints its path (build output goes to stderr). The Swift runtime
# is linked in statically, and lld packs the relocations, exports no symbols and folds identical
# code: weave-healthd's idle RSS drops from 18 MiB (dynamic, no Foundation) to 15 MiB. For
# weave-healthd, lld also places the functions the daemon runs together, from a list made at build
# time (Scripts/order-functions, about a minute under valgrind) whenever a source is newer than it;
# the figures are in Benchmarks/README.md.
# Usage: release_build PRODUCT [swift build options, such as --package-path Benchmarks]
release_build() {
    local product=$1
    shift
    local flags=(-c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic
                 -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --icf=all "$@")
    if [ "$product" = weave-healthd ] && [ -z "${WEAVE_NO_ORDER_FILE:-}" ]; then
        local bin order
        bin=$(swift build "${flags[@]}" --show-bin-path)
        order="$bin/weave-healthd.order"
        if [ ! -f "$order" ] || [ -n "$(find Sources Package.swift -newer "$order" -print -quit)" ]; then
            # Linked once without the list, run to make it, then linked again with it.
            rm -f "$bin/$product"
            swift build "${flags[@]}" --product "$product" >&2 || return
            Scripts/order-functions "$order" "$bin/$product" || return
        fi
        # SwiftPM does not know the linker reads the list: an older binary is removed, so it is linked again.
        if [ "$order" -nt "$bin/$product" ]; then rm -f "$bin/$product"; fi
        flags+=(-Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering)
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
