#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seed corpora for the fuzz targets, from real packets: BUILD/bin/fuzz_corpus (corpus.c)
# runs scripted exchanges of every operation between two SRD endpoints, records every
# datagram they send, and writes DIR/{wire,reasm,srd,engine}. Made afresh at each build
# or test run; never committed.
#   make-corpus.sh BUILD [DIR]   (DIR defaults to BUILD/fuzz-seeds)
set -euo pipefail
build=${1:?usage: make-corpus.sh BUILD [DIR]}
dir=${2:-$build/fuzz-seeds}
rm -rf "$dir"
"$build/bin/fuzz_corpus" "$dir"
# The authenticator's seeds are the wire's datagrams (claimed, then sealed and altered).
cp -r "$dir/wire" "$dir/auth"
