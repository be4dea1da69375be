#!/usr/bin/env bash
# Prepare a Debian 12 (bookworm) machine, as root, to build and test vtpin:
# build dependencies from apt, plus full JDK 21 and JDK 25 installations.
#
# Usage: scripts/setup.sh [--env-file PATH]
#
# Environment:
#   JAVA21_HOME, JAVA25_HOME  preferred JDKs, used when they report the right major
#   VTPIN_CACHE               cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/vtpin)
#   VTPIN_SKIP_APT=1          do not install Debian packages
#   VTPIN_FORCE_TRIXIE=1      ignore JAVA*_HOME and /usr/lib/jvm; always use the
#                             trixie-package recipe (to test the recipe itself)
#
# The JDKs found are written as `export JAVAnn_HOME=...` lines to the env file
# (default $VTPIN_CACHE/jdks.env) and printed on stdout, so both
# `. "$VTPIN_CACHE/jdks.env"` and `eval "$(scripts/setup.sh)"` work.
# All logging goes to stderr.
#
# JDKs that bookworm lacks come from Debian 13 (trixie) .debs, unpacked (never
# installed) into the cache. Trixie's JDK needs glibc >= 2.38 while bookworm has
# 2.36, so its executables are patched to use trixie's dynamic loader and libc
# from a private runtime directory; the rest of the system is untouched.

set -euo pipefail

JDK_VERSIONS=(21 25)
APT_PACKAGES=(
  build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev
  libbpf-dev bpftool clang llvm libelf-dev zlib1g-dev patchelf python3
  ca-certificates
  # the collector's /metrics (libmicrohttpd) and its tests (promtool, a real Prometheus)
  libmicrohttpd-dev prometheus
  # headless browser for the HTML report's tests (tests/jvm/test_views.py)
  chromium
  # libFuzzer and clang's sanitizer runtimes (tests/fuzz)
  libclang-rt-14-dev
  # for the trixie JDK recipe
  debian-archive-keyring
  # the install tests (tests/jvm/test_install.py): the man page rendered, man -w
  groff-base man-db
  # scripts/lint.sh, run by scripts/test.sh: the layout and the checks the repository declares
  clang-format clang-tidy
  # JNA for the JNA fixtures and tests/jvm/test_jna.py: jna.jar, and libjnidispatch.system.so
  libjna-java libjna-jni
  # Go's pprof (go tool pprof) reads the pprof profiles in tests/jvm/test_pprof.py
  golang-go
  # embedded Tomcat 10.1 (virtual-thread connector) for java-fixtures/srctomcat and tests/jvm/test_attach_exact.py
  libtomcat10-java
)
# Trixie libraries the patched JDK runs against (its NEEDED set outside the JDK).
TRIXIE_LIBS=(libc6 libstdc++6 libgcc-s1 zlib1g)
TRIXIE_SOURCE=/etc/apt/sources.list.d/vtpin-trixie.sources
TRIXIE_PREFS=/etc/apt/preferences.d/vtpin-trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MARKER=.vtpin-complete

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; }

ENV_FILE=
while (($#)); do
  case $1 in
    --env-file) (($# >= 2)) || die "--env-file needs a path"; ENV_FILE=$2; shift 2 ;;
    --env-file=*) ENV_FILE=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done

CACHE=${VTPIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vtpin}
# Absolute, because the cache path is baked into patched ELF headers.
CACHE=$(realpath -m -- "$CACHE")
[[ $CACHE != *:* ]] || die "VTPIN_CACHE must not contain ':' (it becomes part of an rpath): $CACHE"
ENV_FILE=${ENV_FILE:-$CACHE/jdks.env}
mkdir -p "$CACHE/jdk"

# Serialise concurrent runs sharing one cache.
exec 9>"$CACHE/.lock"
flock 9

TMP_DIRS=()
TRIXIE_ADDED=0
cleanup() {
  local d
  for d in "${TMP_DIRS[@]}"; do rm -rf -- "$d"; done
  if ((TRIXIE_ADDED)); then
    rm -f "$TRIXIE_SOURCE" "$TRIXIE_PREFS"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export DEBIAN_FRONTEND=noninteractive

# --- 1. Debian packages ------------------------------------------------------

is_installed() {
  [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

install_packages() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "all ${#APT_PACKAGES[@]} Debian packages already installed"
    return
  fi
  ((EUID == 0)) || die "must run as root to install: ${missing[*]} (or set VTPIN_SKIP_APT=1)"
  log "installing Debian packages: ${missing[*]}"
  # apt output goes to stderr so stdout stays sourceable.
  apt-get update >&2 || die "apt-get update failed"
  apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}" >&2 \
    || die "apt-get install failed for: ${missing[*]}"
}

if [[ ${VTPIN_SKIP_APT:-0} == 1 ]]; then
  log "VTPIN_SKIP_APT=1: skipping Debian packages"
else
  install_packages
fi

# --- 2. JDKs -----------------------------------------------------------------

# Major version reported by $1/bin/java, or nothing.
java_major() {
  local out v
  [[ -x $1/bin/java ]] || return 0
  # grep the version line: JAVA_TOOL_OPTIONS may add a "Picked up" line first.
  out=$("$1/bin/java" -version 2>&1 | grep -m1 ' version "') || return 0
  v=${out#*\"}; v=${v%%\"*}
  [[ $v == 1.* ]] && v=${v#1.}
  printf '%s' "${v%%[!0-9]*}"
}

# Cheap check used to pick a candidate: right major version and a full JDK.
jdk_matches() {
  local n=$1 home=$2 f
  [[ $(java_major "$home") == "$n" ]] || return 1
  for f in bin/javac bin/jcmd bin/jfr include/jvmti.h; do
    [[ -e $home/$f ]] || { log "  $home: lacks $f"; return 1; }
  done
}

# Full check: every tool the tests use actually starts.
jdk_verify() {
  local home=$1 cmd
  for cmd in "java -version" "javac -version" "jcmd -h" "jfr --version"; do
    # shellcheck disable=SC2086  # cmd is "tool args"
    if ! "$home/bin/"$cmd >/dev/null 2>&1; then
      log "  $home: '$cmd' failed:"
      "$home/bin/"$cmd 2>&1 | head -5 | sed 's/^/setup:     /' >&2 || true
      return 1
    fi
  done
}

find_system_jdk() {
  local n=$1 var="JAVA${1}_HOME" d
  if [[ -n ${!var:-} ]]; then
    if jdk_matches "$n" "${!var}"; then printf '%s' "${!var}"; return; fi
    log "  ignoring $var=${!var}: not a full JDK $n (bin/java reports major '$(java_major "${!var}")')"
  fi
  for d in /usr/lib/jvm/*; do
    # Skip alias symlinks (java-1.21.0-openjdk-amd64 -> java-21-...).
    [[ -d $d && ! -L $d ]] || continue
    if jdk_matches "$n" "$d"; then printf '%s' "$d"; return; fi
  done
}

# Trixie recipe layout: $CACHE/jdk/openjdk-N/{root,runtime,.vtpin-complete};
# JAVA_HOME is root/usr/lib/jvm/java-N-openjdk-amd64.
trixie_dir() { printf '%s/jdk/openjdk-%s' "$CACHE" "$1"; }
trixie_home() { printf '%s/root/usr/lib/jvm/java-%s-openjdk-amd64' "$(trixie_dir "$1")" "$1"; }

cached_trixie_jdk() {
  local n=$1 dir home
  dir=$(trixie_dir "$n"); home=$(trixie_home "$n")
  [[ -f $dir/$MARKER ]] && jdk_matches "$n" "$home" && printf '%s' "$home"
}

DEB_DIR=
# Download all needed trixie .debs in one go (one apt-get update).
trixie_download() {
  local pkgs=() n
  ((EUID == 0)) || die "must run as root to fetch JDK ${*} from trixie"
  [[ -r $KEYRING ]] || die "$KEYRING missing (install debian-archive-keyring)"
  # bookworm's debian-archive-keyring (2023.3+deb12u1 and later) carries
  # trixie's keys; without them apt-get update below fails on the signature.
  [[ -e /usr/share/keyrings/debian-archive-trixie-automatic.gpg ]] \
    || die "debian-archive-keyring lacks trixie's keys; upgrade it (apt-get install debian-archive-keyring)"
  command -v patchelf >/dev/null || die "patchelf is not installed (needed to run trixie's JDK)"

  log "adding Debian trixie apt source (pin priority 100, removed afterwards)"
  TRIXIE_ADDED=1
  cat >"$TRIXIE_SOURCE" <<EOF
# Temporary, added by vtpin scripts/setup.sh to download JDK packages.
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: $KEYRING
EOF
  # Priority 100 < 500: apt never upgrades bookworm packages from trixie.
  cat >"$TRIXIE_PREFS" <<'EOF'
Package: *
Pin: release n=trixie
Pin-Priority: 100
EOF
  apt-get update >&2 || die "apt-get update with the trixie source failed"

  for n in "$@"; do pkgs+=("openjdk-$n-jdk-headless" "openjdk-$n-jre-headless"); done
  pkgs+=("${TRIXIE_LIBS[@]}")
  DEB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/vtpin-debs.XXXXXX")
  TMP_DIRS+=("$DEB_DIR")
  # Let apt's unprivileged download user write here (avoids the sandbox warning).
  if id _apt >/dev/null 2>&1; then chown _apt "$DEB_DIR"; fi
  log "downloading from trixie: ${pkgs[*]}"
  (cd "$DEB_DIR" && apt-get download "${pkgs[@]/%//trixie}" >&2) \
    || die "apt-get download from trixie failed for: ${pkgs[*]}"

  rm -f "$TRIXIE_SOURCE" "$TRIXIE_PREFS"
  TRIXIE_ADDED=0
  log "removed trixie apt source"
}

# Replace the JDK's dangling absolute symlinks (into /etc/java-N-openjdk, /usr,
# ...) with the files the same debs ship under $root; drop unresolvable ones.
fix_symlinks() {
  local root=$1 home=$2 link target
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    if [[ $target == /* && -e $root$target ]]; then
      rm -f "$link"
      cp -RL "$root$target" "$link"
    elif [[ -e $link ]]; then
      : # resolves on this host or inside the tree (e.g. cacerts); keep
    else
      log "  removing dangling link ${link#"$home"/} -> $target"
      rm -f "$link"
    fi
  done < <(find "$home" -type l -print0)
  if [[ -n $(find "$home" -xtype l -print -quit) ]]; then
    die "dangling symlinks remain in $home"
  fi
}

is_elf() { [[ $(head -c4 "$1" 2>/dev/null) == $'\177ELF' ]]; }

build_trixie_jdk() {
  local n=$1 dir tmp root rt home interp f p deb count=0
  dir=$(trixie_dir "$n")
  # Leftovers of a run killed before its EXIT trap (safe: we hold the lock).
  rm -rf "$CACHE/jdk/.openjdk-$n".*
  tmp=$(mktemp -d "$CACHE/jdk/.openjdk-$n.XXXXXX")
  chmod 755 "$tmp"  # mktemp makes it 0700; other users may run the JDK
  TMP_DIRS+=("$tmp")
  root=$tmp/root
  log "unpacking trixie JDK $n into $tmp"
  for p in "openjdk-$n-jdk-headless" "openjdk-$n-jre-headless" "${TRIXIE_LIBS[@]}"; do
    deb=("$DEB_DIR/${p}"_*.deb)
    [[ -f ${deb[0]} ]] || die "download of trixie package $p is missing"
    dpkg -x "${deb[0]}" "$root"
  done

  # Private runtime: trixie's ld.so, libc, libstdc++, libgcc_s, libz.
  mkdir -p "$tmp/runtime"
  cp -a "$root/usr/lib/x86_64-linux-gnu/." "$tmp/runtime/"
  [[ -f $tmp/runtime/ld-linux-x86-64.so.2 ]] \
    || die "trixie libc6 did not provide usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"

  home=$tmp/root/usr/lib/jvm/java-$n-openjdk-amd64
  [[ -x $home/bin/java ]] || die "trixie JDK $n has no bin/java"
  fix_symlinks "$root" "$home"

  # Paths are baked in as they will be after the rename below.
  rt=$dir/runtime
  interp=$rt/ld-linux-x86-64.so.2
  # Executables (bin/*, lib/jspawnhelper, lib/jexec) are those with PT_INTERP.
  # The JDK's own .so files use DT_RPATH, so the executable's rpath also
  # applies to their dependencies (libstdc++ etc. resolve from the runtime).
  while IFS= read -r -d '' f; do
    if ! is_elf "$f" || ! patchelf --print-interpreter "$f" >/dev/null 2>&1; then
      continue
    fi
    patchelf --set-interpreter "$interp" --force-rpath \
      --set-rpath "$rt:\$ORIGIN/../lib:\$ORIGIN" "$f"
    count=$((count + 1))
  done < <(find "$home" -type f -perm -u+x -print0)
  ((count > 0)) || die "no executables patched in trixie JDK $n"
  log "patched $count executables of JDK $n to use $interp"

  rm -rf "$dir"
  mv "$tmp" "$dir"
  home=$(trixie_home "$n")
  if ! jdk_matches "$n" "$home" || ! jdk_verify "$home"; then
    die "trixie JDK $n was unpacked to $dir but does not run (see above)"
  fi
  "$home/bin/java" -version 2>&1 | grep -m1 ' version "' >"$dir/$MARKER"
}

declare -A FOUND=()
need_trixie=()
for n in "${JDK_VERSIONS[@]}"; do
  home=
  if [[ ${VTPIN_FORCE_TRIXIE:-0} == 1 ]]; then
    log "JDK $n: VTPIN_FORCE_TRIXIE=1, skipping JAVA${n}_HOME and /usr/lib/jvm"
  else
    home=$(find_system_jdk "$n")
  fi
  [[ -n $home ]] || home=$(cached_trixie_jdk "$n") || true
  if [[ -n $home ]]; then
    log "JDK $n: using $home"
    FOUND[$n]=$home
  else
    log "JDK $n: not found, will fetch it from Debian trixie"
    need_trixie+=("$n")
  fi
done

if ((${#need_trixie[@]})); then
  trixie_download "${need_trixie[@]}"
  for n in "${need_trixie[@]}"; do
    build_trixie_jdk "$n"
    FOUND[$n]=$(trixie_home "$n")
    log "JDK $n: provisioned $(cat "$(trixie_dir "$n")/$MARKER")"
  done
fi

failed=()
for n in "${JDK_VERSIONS[@]}"; do
  log "JDK $n: verifying java, javac, jcmd, jfr in ${FOUND[$n]}"
  jdk_verify "${FOUND[$n]}" || failed+=("$n")
done
((${#failed[@]} == 0)) || die "could not provide a working JDK ${failed[*]}"

# --- 3. env file -------------------------------------------------------------

env_text=
for n in "${JDK_VERSIONS[@]}"; do
  env_text+="export JAVA${n}_HOME=$(printf '%q' "${FOUND[$n]}")"$'\n'
done
mkdir -p "$(dirname -- "$ENV_FILE")"
printf '%s' "$env_text" >"$ENV_FILE.tmp.$$"
mv -f "$ENV_FILE.tmp.$$" "$ENV_FILE"
log "wrote $ENV_FILE"
printf '%s' "$env_text"
