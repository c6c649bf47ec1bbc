"""Writes the Swift blocks of README.md and docs/*.md as packages to build (see Scripts/check-snippets).

Usage: snippets.py ROOT WORK RELEASE-URL [GROUP ...]
RELEASE-URL: a tagged clone of this repository, which a manifest's dependency on the published
repository (RELEASED below) is pointed to, so that its version requirement is resolved from tags.
"""
import os
import re
import sys

ROOT, WORK, RELEASE_URL = sys.argv[1:4]
RELEASED = '"https://github.com/weavedi/weave-healthd.git"'
WANTED = set(sys.argv[4:]) or {"integrations", "vapor", "macros", "dependencies"}

GROUPS = {
    # group: (scratch folder, package dependencies, target dependencies)
    "integrations": (".build-integrations", [
        '.package(name: "WeaveDI", path: "{root}", traits: ["Hummingbird"])',
        '.package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0")',
        '.package(url: "https://github.com/apple/swift-log.git", from: "1.16.2")',
        '.package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0")',
    ], [
        ("WeaveDI", "WeaveDI"), ("WeaveHealth", "WeaveDI"), ("WeavePrometheus", "WeaveDI"),
        ("WeaveObservability", "WeaveDI"), ("WeaveMemoryPressure", "WeaveDI"), ("WeaveHealthRoutes", "WeaveDI"), ("WeaveHealthServer", "WeaveDI"), ("WeaveSystemd", "WeaveDI"), ("WeaveAppEndpoint", "WeaveDI"),
        ("WeaveHummingbird", "WeaveDI"), ("Hummingbird", "hummingbird"),
        ("Logging", "swift-log"), ("ServiceLifecycle", "swift-service-lifecycle"),
    ]),
    "vapor": (".build-vapor", [
        '.package(name: "WeaveDI", path: "{root}", traits: ["Vapor"])',
        '.package(url: "https://github.com/vapor/vapor.git", from: "4.122.0")',
    ], [
        ("WeaveDI", "WeaveDI"), ("WeaveAppEndpoint", "WeaveDI"), ("WeaveVapor", "WeaveDI"), ("Vapor", "vapor"),
    ]),
    "macros": (".build-macros", [
        '.package(name: "WeaveDI", path: "{root}")',
        '.package(name: "WeaveMacros", path: "{root}/Integrations/WeaveMacros")',
    ], [("WeaveDI", "WeaveDI"), ("WeaveMacros", "WeaveMacros")]),
    "dependencies": (".build-dependencies", [
        '.package(name: "WeaveDI", path: "{root}")',
        '.package(name: "WeaveDependencies", path: "{root}/Integrations/WeaveDependencies")',
        '.package(url: "https://github.com/pointfreeco/swift-dependencies.git", from: "1.17.1")',
    ], [("WeaveDI", "WeaveDI"), ("WeaveDependencies", "WeaveDependencies"), ("Dependencies", "swift-dependencies")]),
}


def group_of(code):
    imports = set(re.findall(r"^\s*(?:@_exported\s+)?import\s+(\w+)", code, re.M))
    if imports & {"Vapor", "WeaveVapor"}:
        return "vapor"
    if "WeaveMacros" in imports:
        return "macros"
    if imports & {"Dependencies", "WeaveDependencies"}:
        return "dependencies"
    return "integrations"


def blocks(path):
    """(line, code) of each fenced swift block."""
    found, lines = [], open(path, encoding="utf-8").read().split("\n")
    index = 0
    while index < len(lines):
        if re.match(r"^```swift\b", lines[index].strip()):
            start, body = index + 1, []
            index += 1
            while index < len(lines) and lines[index].strip() != "```":
                body.append(lines[index])
                index += 1
            if index == len(lines):
                sys.exit(f"{path}:{start}: a swift block that does not end")
            found.append((start, "\n".join(body) + "\n"))
        index += 1
    return found


documents = [os.path.join(ROOT, "README.md")] + sorted(
    os.path.join(ROOT, "docs", name) for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))

programs = {group: [] for group in GROUPS}  # group: [(target, [source lines], code)]
manifests = []  # (name, manifest, target, code, group, where)
for document in documents:
    relative = os.path.relpath(document, ROOT)
    stem = re.sub(r"\W", "_", os.path.splitext(relative)[0])
    previous = None  # (group, index in programs[group]) of the last program
    for number, (line, code) in enumerate(blocks(document), 1):
        where = f"{relative}:{line}"
        if "import PackageDescription" in code:
            # The manifest of the program before it: that program becomes a package of its own.
            target = re.search(r'executableTarget\(\s*name:\s*"(\w+)"', code)
            if previous is None or not target:
                sys.exit(f"{where}: a manifest needs an executableTarget and a Swift block before it")
            group, position = previous
            _, sources, main = programs[group].pop(position)
            manifests.append((f"{stem}_{number}", code, target.group(1), main, group, f"{' + '.join(sources)} + {where}"))
            previous = None
            continue
        group = group_of(code)
        programs[group].append((f"{stem}_{number}", [where], code))
        previous = (group, len(programs[group]) - 1)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


for group, entries in programs.items():
    if group not in WANTED or not entries:
        continue
    scratch, packages, products = GROUPS[group]
    package = os.path.join(WORK, "snippets-" + group)  # not "vapor": a root package named like a dependency clashes
    dependencies = ",\n".join(f'    .product(name: "{name}", package: "{owner}")' for name, owner in products)
    targets = ",\n".join(f'        .executableTarget(name: "{target}", dependencies: products)' for target, _, _ in entries)
    write(os.path.join(package, "Package.swift"), f"""// swift-tools-version:6.1
import PackageDescription

// Generated by Scripts/check-snippets: the Swift blocks of the documentation, one program each.
let products: [Target.Dependency] = [
{dependencies},
]

let package = Package(
    name: "Snippets{group.capitalize()}",
    dependencies: [
{",".join(chr(10) + "        " + p.format(root=ROOT) for p in packages)},
    ],
    targets: [
{targets},
    ],
    swiftLanguageModes: [.v6]
)
""")
    for target, sources, code in entries:
        write(os.path.join(package, "Sources", target, "main.swift"), f"// {' + '.join(sources)}\n" + code)
    write(os.path.join(package, ".scratch"), os.path.join(ROOT, scratch))
    write(os.path.join(package, "blocks.txt"), "\n".join(" + ".join(sources) for _, sources, _ in entries) + "\n")

for name, manifest, target, code, group, where in manifests:
    if group not in WANTED:
        continue
    package = os.path.join(WORK, name)
    write(os.path.join(package, "Package.swift"),
          manifest.replace('"../weave-healthd', f'"{ROOT}').replace(RELEASED, f'"{RELEASE_URL}"'))
    write(os.path.join(package, "Sources", target, "main.swift"), code)
    write(os.path.join(package, ".scratch"), os.path.join(ROOT, GROUPS[group][0]))
    write(os.path.join(package, "blocks.txt"), where + "\n")
