#!/bin/sh
# install.sh: download, verify and install velesdb-hooks (docs/contract.md §11).
#
#   curl -fsSL https://github.com/<owner>/velesdb-hooks/releases/latest/download/install.sh | sh
#   curl -fsSL …/install.sh | sh -s -- --version v0.1.0 --client claude
#   curl -fsSL …/install.sh | sh -s -- --uninstall
#
# What it does, in order, stopping at the first problem with nothing changed:
#   1. detect the platform: OS, CPU (an x86_64 shell under Rosetta gets the native arm64
#      binary), and on Linux whether the C library is musl; on musl, check that the C++
#      runtime the binary loads (libstdc++, libgcc_s) is installed, before any download;
#   2. download SHA256SUMS and this platform's archive from the release (latest, or the one
#      named by --version) and refuse it unless its SHA-256 matches the listed one;
#   3. extract the binary into a private temporary directory, run its `--version` and refuse
#      it unless it prints the expected version, so a binary that cannot run here never
#      replaces one that can;
#   4. run the downloaded binary's `install [--client C]`: it copies itself to its stable path
#      ($VELESDB_HOOKS_HOME/bin/velesdb-hooks, default ~/.velesdb-hooks/bin/) by temp file
#      and rename, and registers the hooks with each agent;
#   5. point <install dir>/velesdb-hooks at that stable binary with a symlink (one copy on
#      disk), replacing the link by rename; print a PATH hint instead of editing shell files.
# Every step is safe to repeat: a re-run with the same release changes nothing.
#
# Every command lives in a function and the only call is `main "$@"` on the last line, so a
# download cut short (curl | sh gets whatever arrived) defines functions and runs nothing.
#
# Environment:
#   VELESDB_HOOKS_DOWNLOAD_URL  base URL holding SHA256SUMS and the assets directly (a mirror,
#                               or a test server); replaces the GitHub release URL
#   VELESDB_HOOKS_REPO          owner/name of the GitHub repository (default: DEFAULT_REPO)
#   VELESDB_HOOKS_GITHUB        GitHub's base URL (default https://github.com; for Enterprise)
#   VELESDB_HOOKS_INSTALL_DIR   where the `velesdb-hooks` link goes (else $XDG_BIN_HOME,
#                               else ~/.local/bin)
#   VELESDB_HOOKS_HOME          velesdb-hooks' own directory (default ~/.velesdb-hooks)
# Plain http:// is accepted only for 127.0.0.1, localhost and [::1].

set -eu

# The repository whose releases this script installs. The release workflow writes the real
# owner/name on this line when it uploads the script; a copy taken from the source tree keeps
# the placeholder and then needs VELESDB_HOOKS_REPO or VELESDB_HOOKS_DOWNLOAD_URL.
DEFAULT_REPO="OWNER/velesdb-hooks"

EXIT_USAGE=64

# Shared libraries the musl builds load from the system besides musl itself (Bun's musl
# runtime links the C++ runtime dynamically; the glibc builds carry theirs). The release test
# reads every musl asset's NEEDED entries and fails if one is missing here.
MUSL_NEEDED_LIBRARIES="libstdc++.so.6 libgcc_s.so.1"

usage() {
	cat <<'EOF'
Usage: install.sh [--version vX.Y.Z] [--client C]... [--uninstall]

  --version V   install release V (default: the latest release)
  --client C    register hooks for agent C (claude, codex, ...) or all (default: every
                agent whose home directory exists); may be repeated
  --uninstall   remove velesdb-hooks' entries, the install-dir link and the binary
  -h, --help    show this text

Environment: VELESDB_HOOKS_DOWNLOAD_URL, VELESDB_HOOKS_REPO, VELESDB_HOOKS_GITHUB,
VELESDB_HOOKS_INSTALL_DIR (else XDG_BIN_HOME, else ~/.local/bin), VELESDB_HOOKS_HOME.
EOF
}

say() {
	printf 'velesdb-hooks: %s\n' "$*"
}

# die "message" [exit code]: one line on stderr, then exit (1 unless told).
die() {
	printf 'velesdb-hooks install.sh: error: %s\n' "$1" >&2
	exit "${2:-1}"
}

has() {
	command -v "$1" >/dev/null 2>&1
}

# absolute_path NAME VALUE: refuse a relative directory. The binary refuses a relative
# VELESDB_HOOKS_HOME too; a relative install dir would depend on where the script ran.
absolute_path() {
	case $2 in
	/*) ;;
	*) die "$1 must be an absolute path (it is \"$2\")" ;;
	esac
}

# ---------------------------------------------------------------------------------------
# Platform

# detect_platform → prints "<os>-<arch>[-musl]", the suffix of this machine's asset name.
detect_platform() {
	os_name=$(uname -s)
	cpu=$(uname -m)
	case $os_name in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	MINGW* | MSYS* | CYGWIN* | Windows_NT)
		die "on Windows, run in PowerShell: irm <release download URL>/install.ps1 | iex (install.ps1 sits beside install.sh in every release)"
		;;
	*) die "no velesdb-hooks build for $os_name (builds: Linux, macOS, Windows)" ;;
	esac
	case $cpu in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no velesdb-hooks build for $os_name on $cpu (builds: x86_64, arm64)" ;;
	esac
	if [ "$os" = darwin ] && [ "$arch" = x64 ] && is_rosetta; then
		# An x86_64 shell on Apple silicon: the machine runs arm64 natively, and the
		# agents that run the hooks are native too. Installing x64 would route every hook
		# through Rosetta's translation on each call.
		arch=arm64
	fi
	if [ "$os" = linux ] && is_musl; then
		printf '%s-%s-musl\n' "$os" "$arch"
	else
		printf '%s-%s\n' "$os" "$arch"
	fi
}

# is_rosetta: true when this process is an x86_64 process translated by Rosetta 2.
is_rosetta() {
	[ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]
}

# is_musl: true on a musl libc system (Alpine, Void musl). A glibc asset does not start
# there: its interpreter /lib64/ld-linux-*.so is missing, or only a gcompat shim.
is_musl() {
	if has ldd && ldd --version 2>&1 | grep -qi musl; then
		return 0
	fi
	if has getconf && getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
		return 1
	fi
	# No ldd and no getconf (a minimal container): the loader on disk decides.
	for loader in /lib/ld-musl-*.so.1; do
		[ -e "$loader" ] && return 0
	done
	return 1
}

# musl_library_dirs → the directories musl's loader searches: the lines (or colon-separated
# entries) of /etc/ld-musl-<arch>.path when present, else its built-in /lib:/usr/local/lib:/usr/lib.
musl_library_dirs() {
	for path_file in /etc/ld-musl-*.path; do
		if [ -f "$path_file" ]; then
			tr ':' '\n' <"$path_file"
			return
		fi
	done
	printf '%s\n' /lib /usr/local/lib /usr/lib
}

# missing_musl_libraries DIR... → the names of MUSL_NEEDED_LIBRARIES found in none of DIRs.
missing_musl_libraries() {
	missing=""
	for library in $MUSL_NEEDED_LIBRARIES; do
		found=no
		for dir in "$@"; do
			if [ -n "$dir" ] && [ -e "$dir/$library" ]; then
				found=yes
				break
			fi
		done
		[ "$found" = yes ] || missing="$missing $library"
	done
	printf '%s\n' "${missing# }"
}

# require_musl_libraries: stop before any download when the musl binary could not load.
require_musl_libraries() {
	# shellcheck disable=SC2046 # one word per directory: musl's search path has no spaces.
	missing=$(missing_musl_libraries $(musl_library_dirs))
	[ -z "$missing" ] && return
	die "velesdb-hooks needs $missing on this musl system (the C++ runtime it loads); install with: apk add libstdc++ (Alpine; elsewhere your distribution's libstdc++ and libgcc packages) and run this again; nothing was downloaded"
}

# ---------------------------------------------------------------------------------------
# Downloads and checksums

# check_url URL: https anywhere; plain http only to this machine (mirrors in tests).
check_url() {
	case $1 in
	https://*) ;;
	http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/* | http://\[::1\]:* | http://\[::1\]/*) ;;
	*) die "refusing to download from $1: use an https:// URL" ;;
	esac
}

# download URL FILE: fetch with curl or wget; non-zero on any HTTP or network error.
download() {
	check_url "$1"
	if has curl; then
		case $1 in
		https://*) curl --fail --silent --show-error --location --proto '=https' --retry 2 --output "$2" "$1" ;;
		*) curl --fail --silent --show-error --location --proto '=http' --retry 2 --output "$2" "$1" ;;
		esac
	else
		wget -q -O "$2" "$1"
	fi
}

# require_tools: everything an install needs, checked before the first download. No way to
# compute a checksum means no install (fail closed), never an unverified one.
require_tools() {
	has curl || has wget || die "neither curl nor wget is installed; install one of them and run this again"
	has sha256sum || has shasum || die "neither sha256sum nor shasum is installed, so a download cannot be verified; nothing was installed"
	for tool in uname mktemp awk chmod ln mv rm readlink tar gzip; do
		has "$tool" || die "$tool is not installed; nothing was installed"
	done
}

# sha256_of FILE → lowercase hex digest.
sha256_of() {
	if has sha256sum; then
		digest=$(sha256sum "$1") || return 1
	else
		digest=$(shasum -a 256 "$1") || return 1
	fi
	digest=${digest%% *}
	digest=$(printf '%s' "$digest" | tr 'A-F' 'a-f')
	is_sha256 "$digest" || return 1
	printf '%s\n' "$digest"
}

is_sha256() {
	case $1 in
	*[!0-9a-f]* | '') return 1 ;;
	esac
	[ "${#1}" -eq 64 ]
}

# sums_lines SUMS_FILE PLATFORM VERSION → "<hex> <archive>" for each matching entry; VERSION
# empty means any version. Accepts both `sha256sum` text ("  name") and binary (" *name") lines.
sums_lines() {
	awk -v platform="$2" -v version="$3" '
		NF == 2 {
			name = $2
			sub(/^\*/, "", name)
			if (version != "") { if (name != "velesdb-hooks-" version "-" platform ".tar.gz") next }
			else if (name !~ ("^velesdb-hooks-[0-9][0-9A-Za-z.-]*-" platform "\\.tar\\.gz$")) next
			print tolower($1), name
		}' "$1"
}

# ---------------------------------------------------------------------------------------
# Install and uninstall

# stable_binary → the path `velesdb-hooks install` copies itself to (docs/contract.md §9).
stable_binary() {
	tree=${VELESDB_HOOKS_HOME:-}
	if [ -z "$tree" ]; then
		tree="$HOME/.velesdb-hooks"
	fi
	absolute_path VELESDB_HOOKS_HOME "$tree"
	printf '%s/bin/velesdb-hooks\n' "${tree%/}"
}

# install_dir → where the `velesdb-hooks` link goes.
install_dir() {
	if [ -n "${VELESDB_HOOKS_INSTALL_DIR:-}" ]; then
		dir=$VELESDB_HOOKS_INSTALL_DIR
		absolute_path VELESDB_HOOKS_INSTALL_DIR "$dir"
	elif [ -n "${XDG_BIN_HOME:-}" ]; then
		dir=$XDG_BIN_HOME
		absolute_path XDG_BIN_HOME "$dir"
	else
		dir="$HOME/.local/bin"
	fi
	printf '%s\n' "${dir%/}"
}

# release_base → the URL SHA256SUMS and the assets are fetched from.
release_base() {
	if [ -n "${VELESDB_HOOKS_DOWNLOAD_URL:-}" ]; then
		printf '%s\n' "${VELESDB_HOOKS_DOWNLOAD_URL%/}"
		return
	fi
	repo=${VELESDB_HOOKS_REPO:-$DEFAULT_REPO}
	case $repo in
	OWNER/*) die "this copy of install.sh does not name its GitHub repository; set VELESDB_HOOKS_REPO=owner/velesdb-hooks (or VELESDB_HOOKS_DOWNLOAD_URL)" ;;
	*[!A-Za-z0-9_.-]*/* | */*[!A-Za-z0-9_.-]* | /* | */) die "VELESDB_HOOKS_REPO must be owner/name (it is \"$repo\")" ;;
	*/*) ;;
	*) die "VELESDB_HOOKS_REPO must be owner/name (it is \"$repo\")" ;;
	esac
	github=${VELESDB_HOOKS_GITHUB:-https://github.com}
	if [ -n "$want_version" ]; then
		printf '%s/%s/releases/download/v%s\n' "${github%/}" "$repo" "$want_version"
	else
		printf '%s/%s/releases/latest/download\n' "${github%/}" "$repo"
	fi
}

# link_entry STABLE DIR: DIR/velesdb-hooks → STABLE, replaced by rename (never absent, never
# half-made). Anything there that is not a link or a file is left alone and reported.
link_entry() {
	entry="$2/velesdb-hooks"
	if [ "$entry" = "$1" ]; then
		return
	fi
	if [ -L "$entry" ] && [ "$(readlink "$entry")" = "$1" ]; then
		say "link: $entry already points at $1"
		return
	fi
	if [ -d "$entry" ]; then
		die "$entry is a directory; remove it and run this again (the hooks are installed; only the link is missing)"
	fi
	if [ -e "$entry" ] && [ ! -L "$entry" ] && [ ! -f "$entry" ]; then
		die "$entry is not a file or a link; remove it and run this again (the hooks are installed; only the link is missing)"
	fi
	mkdir -p "$2"
	staged="$2/.velesdb-hooks.link.$$"
	rm -f "$staged"
	ln -s "$1" "$staged"
	if ! mv -f "$staged" "$entry"; then
		rm -f "$staged"
		die "could not place the link $entry"
	fi
	say "link: $entry -> $1"
}

path_hint() {
	case ":${PATH:-}:" in
	*":$1:"*) ;;
	*)
		say "$1 is not on your PATH. Add this line to your shell's startup file (~/.profile, ~/.zshrc, ...):"
		# shellcheck disable=SC2016 # $PATH is meant literally: the user's shell expands it.
		printf '\n  export PATH="%s:$PATH"\n\n' "$1"
		;;
	esac
}

do_install() {
	require_tools
	platform=$(detect_platform)
	case $platform in
	*-musl) require_musl_libraries ;;
	esac
	base=$(release_base)
	stable=$(stable_binary)
	bin_dir=$(install_dir)

	tmp_dir=$(mktemp -d "${TMPDIR:-/tmp}/velesdb-hooks-install.XXXXXX") || die "cannot create a temporary directory"
	trap 'rm -rf "$tmp_dir"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP

	say "fetching $base/SHA256SUMS"
	download "$base/SHA256SUMS" "$tmp_dir/SHA256SUMS" || die "could not download $base/SHA256SUMS; nothing was installed"
	sums_lines "$tmp_dir/SHA256SUMS" "$platform" "$want_version" >"$tmp_dir/matches"
	count=$(wc -l <"$tmp_dir/matches" | tr -d ' ')
	if [ "$count" -eq 0 ]; then
		if [ -n "$want_version" ]; then
			die "the release has no velesdb-hooks $want_version for $platform (SHA256SUMS at $base lists none); nothing was installed"
		fi
		die "the release has no velesdb-hooks for $platform (SHA256SUMS at $base lists none); nothing was installed"
	fi
	if [ "$count" -gt 1 ]; then
		die "SHA256SUMS at $base lists $count $platform assets; pick one with --version; nothing was installed"
	fi
	read -r expected asset <"$tmp_dir/matches"
	is_sha256 "$expected" || die "SHA256SUMS at $base has a malformed checksum for $asset; nothing was installed"
	version=${asset#velesdb-hooks-}
	version=${version%-"$platform".tar.gz}

	say "fetching $base/$asset"
	download "$base/$asset" "$tmp_dir/$asset" || die "could not download $base/$asset; nothing was installed"
	actual=$(sha256_of "$tmp_dir/$asset") || die "could not compute the SHA-256 of $asset; nothing was installed"
	if [ "$actual" != "$expected" ]; then
		die "checksum mismatch for $asset (expected $expected, got $actual): the download is corrupt or was tampered with; nothing was installed"
	fi
	say "checksum verified: $asset"

	# The archive holds one file, velesdb-hooks; only that name is extracted, into a directory
	# of our own, and it must come out a regular file (not a link, not a directory).
	mkdir "$tmp_dir/extracted" || die "cannot create a temporary directory"
	if ! gzip -dc "$tmp_dir/$asset" | (cd "$tmp_dir/extracted" && tar -xf - velesdb-hooks); then
		die "could not extract velesdb-hooks from $asset; nothing was installed"
	fi
	binary="$tmp_dir/extracted/velesdb-hooks"
	if [ -L "$binary" ] || [ ! -f "$binary" ]; then
		die "$asset does not hold the file velesdb-hooks; nothing was installed"
	fi
	chmod 755 "$binary"
	smoke_status=0
	smoke=$("$binary" --version </dev/null 2>&1) || smoke_status=$?
	if [ "$smoke_status" -ne 0 ] || [ "$smoke" != "velesdb-hooks $version" ]; then
		if [ "$smoke_status" -eq 126 ]; then
			die "cannot execute the binary from $asset: ${TMPDIR:-/tmp} may be mounted noexec (set TMPDIR to a directory where programs can run), or the file is not a program for this machine; nothing was installed"
		fi
		first_line=$(printf '%s\n' "$smoke" | sed -n 1p)
		die "the binary from $asset does not run here (--version exited $smoke_status: ${first_line:-no output}); nothing was installed"
	fi

	# The binary places itself at the stable path and registers the hooks. stdin is closed:
	# under `curl … | sh` it is this script, which a child must never read.
	say "running: velesdb-hooks install${client_args}"
	# shellcheck disable=SC2086 # client_args holds validated words ([a-z] only).
	"$binary" install $client_args </dev/null || die "velesdb-hooks install failed (see above); $bin_dir was not changed"
	[ -x "$stable" ] || die "velesdb-hooks install did not leave a binary at $stable; $bin_dir was not changed"

	link_entry "$stable" "$bin_dir"
	say "installed velesdb-hooks $version"
	path_hint "$bin_dir"
}

do_uninstall() {
	stable=$(stable_binary)
	bin_dir=$(install_dir)
	entry="$bin_dir/velesdb-hooks"
	if [ -x "$stable" ]; then
		say "running: velesdb-hooks uninstall${client_args}"
		# shellcheck disable=SC2086 # client_args holds validated words ([a-z] only).
		"$stable" uninstall $client_args </dev/null || die "velesdb-hooks uninstall failed (see above); the binary and $entry were kept"
	else
		say "no binary at $stable; no agent entries could be removed by it"
	fi
	# The link goes with the binary: `uninstall --client claude` keeps the binary while
	# another agent still uses it, and then the link stays too.
	if [ -L "$entry" ] && [ "$(readlink "$entry")" = "$stable" ]; then
		if [ -e "$stable" ]; then
			say "link: kept $entry (the binary is still in use)"
		else
			rm -f "$entry"
			say "link: removed $entry"
		fi
	elif [ -e "$entry" ] || [ -L "$entry" ]; then
		say "link: left $entry alone (it does not point at $stable)"
	fi
}

main() {
	want_version=""
	client_args=""
	action=install
	while [ "$#" -gt 0 ]; do
		case $1 in
		--version | --client)
			[ "$#" -ge 2 ] || die "$1 needs a value" "$EXIT_USAGE"
			set_option "$1" "$2"
			shift 2
			;;
		--version=* | --client=*)
			set_option "${1%%=*}" "${1#*=}"
			shift
			;;
		--uninstall)
			action=uninstall
			shift
			;;
		-h | --help)
			usage
			return 0
			;;
		*)
			usage >&2
			die "unknown option $1" "$EXIT_USAGE"
			;;
		esac
	done
	if [ -z "${HOME:-}" ]; then
		die "HOME is not set"
	fi
	if [ "$action" = uninstall ]; then
		[ -z "$want_version" ] || die "--uninstall does not take --version" "$EXIT_USAGE"
		do_uninstall
	else
		do_install
	fi
}

# set_option --version|--client VALUE: validated here, so nothing odd reaches a URL or argv.
set_option() {
	case $1 in
	--version)
		v=${2#v}
		case $v in
		[0-9]*.[0-9]*.[0-9]*) ;;
		*) die "--version takes a release such as v0.1.0 (got \"$2\")" "$EXIT_USAGE" ;;
		esac
		case $v in
		*[!0-9A-Za-z.-]*) die "--version takes a release such as v0.1.0 (got \"$2\")" "$EXIT_USAGE" ;;
		esac
		want_version=$v
		;;
	--client)
		case $2 in
		'' | *[!a-z]*) die "--client takes an agent name (claude, codex, ...) or all (got \"$2\")" "$EXIT_USAGE" ;;
		esac
		client_args="$client_args --client $2"
		;;
	esac
}

main "$@"
