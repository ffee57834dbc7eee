#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make deb`: a Debian package of a built tree, laid out by the install rules
# (cmake/install.cmake) under /usr and wrapped by dpkg-deb. The libraries stay in
# /usr/lib/softefa, apart from the system's libibverbs, so installing the package changes
# no other program: only `softefa run` and programs built with `pkg-config softefa` load
# them. Depends: the Debian packages that hold the libraries our files need.
# Usage: deb.sh BUILD_DIR OUT_DIR   (prints the package's path)
set -euo pipefail
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-deb dpkg-query objdump gzip; do
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

# Each library an installed file needs, by the package that holds it here (ours aside).
needed=$(for f in $elves; do objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'; done |
	sort -u | grep -v -e '^libibverbs\.so' -e '^libefa\.so')
deps=()
for lib in $needed; do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
	[ -n "$path" ] || { echo "deb: $lib is not in the loader's cache" >&2; exit 1; }
	pkg=$( (dpkg-query -S "$path" || dpkg-query -S "$(readlink -f "$path")") 2>/dev/null |
		head -n 1 | cut -d: -f1)
	[ -n "$pkg" ] || { echo "deb: no package holds $path" >&2; exit 1; }
	ver=$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//')
	deps+=("$pkg (>= $ver)")
done
depends=$(printf '%s\n' "${deps[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<TXT
Package: softefa
Version: $version
Architecture: $arch
Maintainer: softefa developers <softefa@localhost.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends
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
deb=$out/softefa_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
