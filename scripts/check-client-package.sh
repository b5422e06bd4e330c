#!/usr/bin/env bash
# Checks that sleepcycle can be used as a versioned SwiftPM dependency (SwiftPM refuses, for one, any package with
# `unsafeFlags` there). Clones this repository's committed HEAD into a temporary directory, tags the clone (only the
# clone) with a plain semantic version, makes a client package depending on it with
# `.package(url: "file://…", from: VERSION)` whose main.swift is the code of the getting-started article
# (Sources/SleepCycle/SleepCycle.docc/GettingStarted.md, its ```swift blocks in order), builds the client with
# `swift build` and runs it on the bundled example night. Fails if any step fails; removes the temporary directory.
#   scripts/check-client-package.sh        VERSION=1.2.3 to tag another version; KEEP=1 to keep the directory
# Uncommitted changes are not checked: commit first. Needs git and the Swift toolchain (see install-deps.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
version=${VERSION:-1.0.0}
work=$(mktemp -d "${TMPDIR:-/tmp}/sleepcycle-client.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "check-client-package: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
step() { echo "check-client-package: $*"; }
fail() { echo "check-client-package: FAILED: $*" >&2; exit 1; }

head=$(git -C "$repo" rev-parse HEAD)
step "cloning $repo at ${head:0:12} and tagging the clone $version"
git -c advice.detachedHead=false clone --quiet "$repo" "$work/sleepcycle" || fail "git clone of $repo"
git -C "$work/sleepcycle" tag "$version" "$head" || fail "tagging the clone $version"

mkdir -p "$work/client/Sources/Client"
article="$work/sleepcycle/Sources/SleepCycle/SleepCycle.docc/GettingStarted.md"
awk '/^```swift$/ { code = 1; next } /^```$/ { code = 0; next } code' "$article" > "$work/client/Sources/Client/main.swift"
[ -s "$work/client/Sources/Client/main.swift" ] || fail "no Swift code in $article"
cat > "$work/client/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "sleepcycle-client",
    platforms: [.macOS(.v14)],
    dependencies: [.package(url: "file://$work/sleepcycle", from: "$version")],
    targets: [
        .executableTarget(name: "Client", dependencies: [.product(name: "SleepCycle", package: "sleepcycle")]),
    ]
)
MANIFEST

step "resolving sleepcycle from: $version"
swift package --package-path "$work/client" resolve || fail "swift package resolve of the client"
step "building the client"
swift build --package-path "$work/client" || fail "swift build of the client (the error above says why)"
step "running the getting-started code on the example night"
"$(swift build --package-path "$work/client" --show-bin-path)/Client" "$work/sleepcycle/Fixtures/example-night.flac" \
    > "$work/client.out" || fail "the client's analysis"
grep -q "^Night of 2026-01-01" "$work/client.out" || fail "the client printed no night summary"
grep -q "^snore at " "$work/client.out" || fail "the client found no snore in the example night"
grep -q "^live session: " "$work/client.out" || fail "the client's live session did not finish"
tail -n 3 "$work/client.out"
step "passed in ${SECONDS} s"
