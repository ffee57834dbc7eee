#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make deb`: a Debian package of a built tree, laid out by the install rules
# (cmake/install.cmake) under /usr and wrapped by dpkg-deb. The libraries stay in
# /usr/lib/softefa, apart from the system's libibverbs, so installing the package changes
# no other program: only `softefa run` and programs built with `pkg-config softefa` load
# them. Depends: the Debian packages that hold the libraries our files need.
# Usage: deb.sh BUILD_DIR OUT_DIR   (prints the package's path)
set -euo pipefail
# The package's files and directories readable by all, whatever the caller's umask.
umask 022
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-deb dpkg-query objdump gzip ldd md5sum strip; do
	command -v "$tool" >/dev/null || {
		echo "deb: $tool is missing (scripts/deps.sh test installs it)" >&2
		exit 1
	}
done

version=$(sed -n 's/^project(softefa VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage cmake --install "$build" --prefix /usr >/dev/null

# As a Debian package has them: no debugging symbols, man pages compressed, a copyright.
elves=$(find "$stage" -type f \( -name '*.so.*' -o -perm -u+x \) -exec sh -c \
	'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
for f in $elves; do strip --strip-unneeded --remove-section=.comment "$f"; done
find "$stage/usr/share/man" -type f -exec gzip -9n {} \;
doc=$stage/usr/share/doc/softefa
mkdir -p "$doc"
cat >"$doc/copyright" <<'TXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: softefa

Files: *
Copyright: the softefa developers
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify,
 merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
 permit persons to whom the Software is furnished to do so, subject to the following
 conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies
 or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
 PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
 HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR
 THE USE OR OTHER DEALINGS IN THE SOFTWARE.
TXT

# Depends: for each library an installed file needs (ours aside), the package holding
# the file the loader resolves it to, and as its least version the newest symbol
# version our files bind from it (GLIBC_2.34: libc6 >= 2.34), as symbols files give.
need_from() { # FILE: "library version-node" lines of what FILE binds
	objdump -p "$1" | awk '/^Version References:/ { on = 1; next }
		on && /required from/ { lib = $3; sub(":", "", lib); next }
		on && NF == 4 && lib != "" { print lib, $4 }
		on && NF == 0 { on = 0 }'
}
refs=$(for f in $elves; do need_from "$f"; done | sort -u)
resolved=$(for f in $elves; do ldd "$f"; done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }
	$1 ~ /^\// { n = $1; sub(/.*\//, "", n); print n, $1 }' | sort -u)
deps=()
for lib in $(for f in $elves; do objdump -p "$f"; done | awk '$1 == "NEEDED" { print $2 }' | sort -u); do
	path=$(awk -v l="$lib" '$1 == l { print $2; exit }' <<<"$resolved")
	case "$path" in
	"$stage"/*) continue ;; # one of ours
	"") echo "deb: the loader resolves no $lib here" >&2 && exit 1 ;;
	esac
	pkg=$( (dpkg-query -S "$path" || dpkg-query -S "$(readlink -f "$path")" || true) 2>/dev/null |
		grep -v '^diversion' | head -n 1 | cut -d: -f1)
	[ -n "$pkg" ] || { echo "deb: no package holds $path ($lib)" >&2 && exit 1; }
	ver=$(awk -v l="$lib" '$1 == l { v = $2; sub(/^[A-Z_]*_/, "", v); print v }' <<<"$refs" |
		sort -V | tail -n 1)
	deps+=("$pkg ${ver:-0}")
done
# One entry a package (libc6 holds libc, libm and the loader), with the newest version.
depends=$(printf '%s\n' "${deps[@]}" | sort -k1,1 -k2,2V | awk '{ v[$1] = $2 }
	END { for (p in v) print p (v[p] == "0" ? "" : " (>= " v[p] ")") }' | sort | paste -sd, |
	sed 's/,/, /g')

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<TXT
Package: softefa
Version: $version
Architecture: $arch
Maintainer: softefa developers <softefa@localhost.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends
Recommends: libibverbs-dev, pkg-config
Suggests: ibverbs-utils, perftest, libfabric-bin
Section: net
Priority: optional
Description: AWS Elastic Fabric Adapter without the hardware
 A userspace implementation of the EFA device, its direct-verbs API (efadv) and its
 SRD transport over UDP/IP: drop-in libibverbs.so.1 and libefa.so.1 in
 /usr/lib/softefa, so that unmodified EFA software (perftest, libfabric's efa
 provider, rdma-core's pyverbs tests, MPI over libfabric) runs without an EFA device.
 Programs load them through "softefa run" or when built with "pkg-config softefa";
 the system's libibverbs is left as it is.
TXT
(cd "$stage" && find usr -type f -exec md5sum {} + | sort -k 2) >"$stage/DEBIAN/md5sums"
deb=$out/softefa_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
