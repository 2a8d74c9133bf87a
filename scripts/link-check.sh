#!/usr/bin/env bash
# Every relative link of every tracked markdown page resolves: `[text](path)`, `![alt](path)`, `[text](path#anchor)`,
# `[text](#anchor)` and reference definitions `[name]: path`. A path must name a tracked file, or a folder holding one;
# an anchor into a markdown page must name one of its headings, slugged as GitHub slugs them (the heading's text without
# its markup, lower case, every character but letters, digits, spaces, hyphens and underscores dropped, each space a
# hyphen, a repeated slug numbered -1, -2, ...), or an HTML id/name in the page. Links inside fenced code blocks and
# code spans are text, not links. External links (http, https, mailto) are counted, not fetched.
# Hand-written rather than a markdown link checker from a registry: none is installed here, the job is ~100 lines,
# and the slug rule must be GitHub's, which the project's anchors follow.
# Ends with one "N passed, N failed" line: one check per page, failed when any link of the page is broken.
set -uo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git ls-files >"$work/files.txt"
git ls-files '*.md' >"$work/pages.txt"

# One pass of perl over every page: the anchors each page offers (page<TAB>anchor) and the links it holds
# (page<TAB>line<TAB>target).
perl -CSD -e '
  use strict; use warnings;
  open(my $anchors, ">", $ARGV[0]) or die; open(my $links, ">", $ARGV[1]) or die;
  binmode($anchors, ":utf8"); binmode($links, ":utf8");
  open(my $pages, "<", $ARGV[2]) or die;
  while (my $page = <$pages>) {
    chomp $page;
    open(my $in, "<:utf8", $page) or die "$page: $!";
    my ($fence, %seen) = ("");
    while (my $line = <$in>) {
      chomp $line;
      if ($line =~ /^\s*(```+|~~~+)/) {
        my $mark = substr($1, 0, 3);
        if ($fence eq "") { $fence = $mark } elsif ($mark eq $fence) { $fence = "" }
        next;
      }
      next if $fence ne "";
      while ($line =~ /<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi) { print $anchors "$page\t$1\n" }
      if ($line =~ /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/) {
        my $text = $1;
        $text =~ s/!?\[([^\]]*)\]\([^)]*\)/$1/g;   # a link or image: its text
        $text =~ s/<[^>]+>//g;                     # HTML tags
        my $slug = lc $text;
        $slug =~ s/[^\p{L}\p{M}\p{N}\p{Pc} \-]//g;  # GitHub keeps letters, digits, underscores, spaces, hyphens
        $slug =~ s/ /-/g;
        my $n = $seen{$slug}++;
        print $anchors "$page\t", ($n ? "$slug-$n" : $slug), "\n";
      }
      (my $text = $line) =~ s/(`+).*?\1//g;          # code spans are text
      my $lineno = $.;
      if ($text =~ /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/) { print $links "$page\t$lineno\t$1\n" }
      while ($text =~ /\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"]*")?\s*\)/g) { print $links "$page\t$lineno\t$1\n" }
    }
  }
' "$work/anchors.txt" "$work/links.txt" "$work/pages.txt" || { echo "link-check: could not read the pages"; echo "0 passed, 1 failed"; exit 1; }

declare -A tracked=() folder=() anchor=()
while IFS= read -r f; do
  tracked[$f]=1
  d=$f
  while [[ $d == */* ]]; do d=${d%/*}; folder[$d]=1; done
done <"$work/files.txt"
while IFS=$'\t' read -r page a; do anchor["$page#$a"]=1; done <"$work/anchors.txt"

# normalize <path>: the path with "." and ".." folded away (empty when it leaves the repository).
normalize() {
  local part out=() IFS=/
  for part in $1; do
    case "$part" in
      ''|.) ;;
      ..) [ ${#out[@]} -gt 0 ] || { echo ""; return; }; unset 'out[${#out[@]}-1]' ;;
      *) out+=("$part") ;;
    esac
  done
  echo "${out[*]}"
}

passed=0; failed=0; external=0; relative=0
declare -A broken=()
while IFS=$'\t' read -r page line target; do
  case "$target" in
    http://*|https://*|mailto:*) external=$((external + 1)); continue ;;
    *://*) external=$((external + 1)); continue ;;
  esac
  relative=$((relative + 1))
  path=${target%%#*}
  frag=; [[ $target == *#* ]] && frag=${target#*#}
  path=${path//%20/ }
  if [ -z "$path" ]; then
    resolved=$page
  else
    dir=$(dirname "$page"); [ "$dir" = . ] && dir=
    if [[ $path == /* ]]; then resolved=$(normalize "$path"); else resolved=$(normalize "${dir:+$dir/}$path"); fi
  fi
  problem=
  if [ -z "$resolved" ]; then problem="leaves the repository"
  elif [ -z "${tracked[$resolved]:-}" ] && [ -z "${folder[${resolved%/}]:-}" ]; then problem="no tracked file or folder $resolved"
  elif [ -n "$frag" ] && [[ $resolved == *.md ]] && [ -z "${anchor["$resolved#$frag"]:-}" ]; then problem="no heading #$frag in $resolved"
  fi
  if [ -n "$problem" ]; then
    echo "  broken: $page:$line: ($target) $problem"
    broken[$page]=1
  fi
done <"$work/links.txt"

while IFS= read -r page; do
  if [ -n "${broken[$page]:-}" ]; then failed=$((failed + 1)); echo "  FAIL $page"; else passed=$((passed + 1)); fi
done <"$work/pages.txt"
echo "link-check: $(wc -l <"$work/pages.txt") pages, $relative relative links checked, $external external links listed (not fetched)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
