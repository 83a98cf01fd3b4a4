#!/bin/sh
# Builds the corpus of bench/real-files.ts from other projects' test files (not committed: their
# licences differ). Each repository is a bare git mirror (for example `git clone --mirror
# https://github.com/qpdf/qpdf`); the sample is every k-th file of the sorted list, at most 3 MB,
# so a rerun picks the same files.
#   sh bench/real-files-corpus.sh MIRRORS_DIR OUT_DIR
# MIRRORS_DIR holds qpdf+qpdf, apache+poi, python-openxml+python-docx, scanny+python-pptx and
# lovell+sharp, each a bare repository (or a `repo` folder in it).
set -eu
mirrors=$1
out=$2
mkdir -p "$out/qpdf" "$out/office" "$out/images"

gitdir() { if [ -d "$mirrors/$1/repo" ]; then echo "$mirrors/$1/repo"; else echo "$mirrors/$1"; fi; }

# take REPO SUBDIR REGEX STRIDE LIMIT DEST PREFIX: every STRIDE-th matching file under 3 MB, at most LIMIT.
take() {
  g=$(gitdir "$1")
  git --git-dir="$g" ls-tree -r -l HEAD "$2" | awk -v re="$3" '$4 <= 3145728 && tolower($5) ~ re { print $5 }' | sort |
    awk -v s="$4" 'NR % s == 1 || s == 1' | head -n "$5" | while read -r f; do
      git --git-dir="$g" show "HEAD:$f" > "$6/$7$(basename "$f")"
    done
}

take qpdf+qpdf qpdf/qtest/qpdf '\.pdf$' 10 60 "$out/qpdf" ''
take apache+poi test-data/document '\.(doc|docx|rtf|odt)$' 25 10 "$out/office" poi-
take apache+poi test-data/spreadsheet '\.(xls|xlsx|ods)$' 60 10 "$out/office" poi-
take apache+poi test-data/slideshow '\.(ppt|pptx|odp)$' 20 10 "$out/office" poi-
take python-openxml+python-docx . '\.docx$' 8 6 "$out/office" python-docx-
take scanny+python-pptx . '\.pptx$' 12 6 "$out/office" python-pptx-
take lovell+sharp test/fixtures '\.(jpe?g|png|webp|gif|tiff?|avif|heic|svg)$' 16 32 "$out/images" ''
for d in qpdf office images; do echo "$d: $(ls "$out/$d" | wc -l) files"; done
