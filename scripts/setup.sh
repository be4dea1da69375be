#!/usr/bin/env bash
# Prepare a Debian 12 (bookworm) machine, as root, to build and test vtpin:
# build dependencies from apt, plus full JDK 21, 25, 26 and 27 installations.
#
# Usage: scripts/setup.sh [--env-file PATH]
#
# Environment:
#   JAVA21_HOME ... JAVA27_HOME  preferred JDKs, used when they report the right major
#   VTPIN_CACHE               cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/vtpin)
#   VTPIN_SKIP_APT=1          do not install Debian packages
#   VTPIN_FORCE_TRIXIE=1      ignore JAVA*_HOME and /usr/lib/jvm; always use the
#                             Debian-package recipe (to test the recipe itself)
#
# The JDKs found are written as `export JAVAnn_HOME=...` lines to the env file
# (default $VTPIN_CACHE/jdks.env) and printed on stdout, so both
# `. "$VTPIN_CACHE/jdks.env"` and `eval "$(scripts/setup.sh)"` work.
# All logging goes to stderr.
#
# JDKs that bookworm lacks come from newer Debian .debs, unpacked (never
# installed) into the cache: 21 and 25 from Debian 13 (trixie), 26 and 27 from
# sid. Those JDKs need a newer glibc than bookworm's 2.36, so their executables
# are patched to use their own suite's dynamic loader and libc from a private
# runtime directory; the rest of the system is untouched.
#
# 21 and 25 are required. 26 and 27 are provided when sid has them: sid drops a
# JDK once it is out of support, and then setup says so and goes on without it
# (its tests skip, saying why).

set -euo pipefail

JDK_VERSIONS=(21 25 26 27)
# The Debian suite each JDK comes from, and whether setup fails without it.
declare -A JDK_SUITE=([21]=trixie [25]=trixie [26]=sid [27]=sid)
declare -A JDK_REQUIRED=([21]=1 [25]=1 [26]=0 [27]=0)
APT_PACKAGES=(
  build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev
  libbpf-dev bpftool clang llvm libelf-dev libdw-dev libcapstone-dev zlib1g-dev patchelf python3
  ca-certificates
  # the collector's /metrics (libmicrohttpd) and its tests (promtool, a real Prometheus)
  libmicrohttpd-dev prometheus
  # headless browser for the HTML report's tests (tests/jvm/test_views.py)
  chromium
  # libFuzzer and clang's sanitizer runtimes (tests/fuzz)
  libclang-rt-14-dev
  # for the Debian-package JDK recipe
  debian-archive-keyring
  # the install tests (tests/jvm/test_install.py): the man page rendered, man -w
  groff-base man-db
  # scripts/lint.sh, run by scripts/test.sh: the layout and the checks the repository declares
  clang-format clang-tidy
  # JNA for the JNA fixtures and tests/jvm/test_jna.py: jna.jar, and libjnidispatch.system.so
  libjna-java libjna-jni
  # Go's pprof (go tool pprof) reads the pprof profiles in tests/jvm/test_pprof.py
  golang-go
  # GNU time: the report's peak memory in tests/jvm/test_views.py (memory cases)
  time
  # embedded Tomcat 10.1 (virtual-thread connector) for java-fixtures/srctomcat and tests/jvm/test_attach_exact.py
  libtomcat10-java
  # JUnit 5 (the jars vtpin-junit.jar builds against, and the console launcher tests/jvm/test_junit.py runs)
  junit5
  # Maven offline, for examples/maven (tests/jvm/test_junit.py maven): the plugin versions its pom pins
  maven libsurefire-java libmaven-compiler-plugin-java libmaven-resources-plugin-java
)
# The suite's libraries the patched JDK runs against (its NEEDED set outside the JDK).
SUITE_LIBS=(libc6 libstdc++6 libgcc-s1 zlib1g)
SUITE_SOURCE=/etc/apt/sources.list.d/vtpin-jdk-suite.sources
SUITE_PREFS=/etc/apt/preferences.d/vtpin-jdk-suite
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
SUITE_ADDED=0
cleanup() {
  local d
  for d in "${TMP_DIRS[@]}"; do rm -rf -- "$d"; done
  if ((SUITE_ADDED)); then
    rm -f "$SUITE_SOURCE" "$SUITE_PREFS"
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

# Debian-package recipe layout: $CACHE/jdk/openjdk-N/{root,runtime,.vtpin-complete};
# JAVA_HOME is root/usr/lib/jvm/java-N-openjdk-amd64.
deb_jdk_dir() { printf '%s/jdk/openjdk-%s' "$CACHE" "$1"; }
deb_jdk_home() { printf '%s/root/usr/lib/jvm/java-%s-openjdk-amd64' "$(deb_jdk_dir "$1")" "$1"; }

cached_deb_jdk() {
  local n=$1 dir home
  dir=$(deb_jdk_dir "$n"); home=$(deb_jdk_home "$n")
  [[ -f $dir/$MARKER ]] && jdk_matches "$n" "$home" && printf '%s' "$home"
}

# Each suite's .debs in a directory of their own: two suites ship different libc6 versions.
declare -A DEB_DIR=()
# JDKs the suite's archive does not have (set by suite_download).
MISSING=()
# Download the JDK .debs of one suite and its runtime libraries (one apt-get update).
suite_download() {
  local suite=$1 pkgs=() n dir have=()
  shift
  ((EUID == 0)) || die "must run as root to fetch JDK ${*} from Debian $suite"
  [[ -r $KEYRING ]] || die "$KEYRING missing (install debian-archive-keyring)"
  # bookworm's debian-archive-keyring (2023.3+deb12u1 and later) carries
  # trixie's keys, which also sign sid; without them apt-get update fails on the signature.
  [[ -e /usr/share/keyrings/debian-archive-trixie-automatic.gpg ]] \
    || die "debian-archive-keyring lacks trixie's keys; upgrade it (apt-get install debian-archive-keyring)"
  command -v patchelf >/dev/null || die "patchelf is not installed (needed to run $suite's JDK)"

  log "adding Debian $suite apt source (pin priority 100, removed afterwards)"
  SUITE_ADDED=1
  printf '%s\n' "# Temporary, added by vtpin scripts/setup.sh to download JDK packages." \
    "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: $suite" "Components: main" \
    "Signed-By: $KEYRING" >"$SUITE_SOURCE"
  # Priority 100 < 500: apt never upgrades bookworm packages from this suite.
  printf '%s\n' "Package: *" "Pin: release n=$suite" "Pin-Priority: 100" >"$SUITE_PREFS"
  apt-get update >&2 || die "apt-get update with the Debian $suite source failed"

  for n in "$@"; do
    if [[ -n $(apt-cache madison "openjdk-$n-jdk-headless" 2>/dev/null | grep " $suite/") ]]; then
      have+=("$n")
      pkgs+=("openjdk-$n-jdk-headless" "openjdk-$n-jre-headless")
    else
      MISSING+=("$n")
      log "JDK $n: Debian $suite has no openjdk-$n-jdk-headless (dropped from the archive?)"
    fi
  done
  if ((${#have[@]})); then
    pkgs+=("${SUITE_LIBS[@]}")
    dir=$(mktemp -d "${TMPDIR:-/tmp}/vtpin-debs-$suite.XXXXXX")
    TMP_DIRS+=("$dir")
    DEB_DIR[$suite]=$dir
    # Let apt's unprivileged download user write here (avoids the sandbox warning).
    if id _apt >/dev/null 2>&1; then chown _apt "$dir"; fi
    log "downloading from $suite: ${pkgs[*]}"
    (cd "$dir" && apt-get download "${pkgs[@]/%//$suite}" >&2) \
      || die "apt-get download from $suite failed for: ${pkgs[*]}"
  fi

  rm -f "$SUITE_SOURCE" "$SUITE_PREFS"
  SUITE_ADDED=0
  log "removed Debian $suite apt source"
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

build_deb_jdk() {
  local n=$1 suite=${JDK_SUITE[$1]} dir tmp root rt home interp f p deb count=0
  dir=$(deb_jdk_dir "$n")
  # Leftovers of a run killed before its EXIT trap (safe: we hold the lock).
  rm -rf "$CACHE/jdk/.openjdk-$n".*
  tmp=$(mktemp -d "$CACHE/jdk/.openjdk-$n.XXXXXX")
  chmod 755 "$tmp"  # mktemp makes it 0700; other users may run the JDK
  TMP_DIRS+=("$tmp")
  root=$tmp/root
  log "unpacking $suite JDK $n into $tmp"
  for p in "openjdk-$n-jdk-headless" "openjdk-$n-jre-headless" "${SUITE_LIBS[@]}"; do
    deb=("${DEB_DIR[$suite]}/${p}"_*.deb)
    [[ -f ${deb[0]} ]] || die "download of $suite package $p is missing"
    dpkg -x "${deb[0]}" "$root"
  done

  # Private runtime: the suite's ld.so, libc, libstdc++, libgcc_s, libz.
  mkdir -p "$tmp/runtime"
  cp -a "$root/usr/lib/x86_64-linux-gnu/." "$tmp/runtime/"
  [[ -f $tmp/runtime/ld-linux-x86-64.so.2 ]] \
    || die "$suite libc6 did not provide usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"

  home=$tmp/root/usr/lib/jvm/java-$n-openjdk-amd64
  [[ -x $home/bin/java ]] || die "$suite JDK $n has no bin/java"
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
  ((count > 0)) || die "no executables patched in $suite JDK $n"
  log "patched $count executables of JDK $n to use $interp"

  rm -rf "$dir"
  mv "$tmp" "$dir"
  home=$(deb_jdk_home "$n")
  if ! jdk_matches "$n" "$home" || ! jdk_verify "$home"; then
    die "$suite JDK $n was unpacked to $dir but does not run (see above)"
  fi
  "$home/bin/java" -version 2>&1 | grep -m1 ' version "' >"$dir/$MARKER"
}

declare -A FOUND=()
declare -A NEED=() # suite -> the JDKs to fetch from it
for n in "${JDK_VERSIONS[@]}"; do
  home=
  if [[ ${VTPIN_FORCE_TRIXIE:-0} == 1 ]]; then
    log "JDK $n: VTPIN_FORCE_TRIXIE=1, skipping JAVA${n}_HOME and /usr/lib/jvm"
  else
    home=$(find_system_jdk "$n")
  fi
  [[ -n $home ]] || home=$(cached_deb_jdk "$n") || true
  if [[ -n $home ]]; then
    log "JDK $n: using $home"
    FOUND[$n]=$home
  else
    log "JDK $n: not found, will fetch it from Debian ${JDK_SUITE[$n]}"
    NEED[${JDK_SUITE[$n]}]+=" $n"
  fi
done

for suite in "${!NEED[@]}"; do
  # shellcheck disable=SC2086  # a list of versions
  suite_download "$suite" ${NEED[$suite]}
  for n in ${NEED[$suite]}; do
    [[ " ${MISSING[*]} " != *" $n "* ]] || continue
    build_deb_jdk "$n"
    FOUND[$n]=$(deb_jdk_home "$n")
    log "JDK $n: provisioned $(cat "$(deb_jdk_dir "$n")/$MARKER")"
  done
done
for n in "${MISSING[@]}"; do
  if ((JDK_REQUIRED[$n])); then
    die "JDK $n is required and Debian ${JDK_SUITE[$n]} does not have it: set JAVA${n}_HOME to a JDK $n"
  fi
  log "WARNING: no JDK $n (Debian ${JDK_SUITE[$n]} lacks it, JAVA${n}_HOME unset): its tests will skip"
done

failed=()
for n in "${!FOUND[@]}"; do
  log "JDK $n: verifying java, javac, jcmd, jfr in ${FOUND[$n]}"
  jdk_verify "${FOUND[$n]}" || failed+=("$n")
done
((${#failed[@]} == 0)) || die "could not provide a working JDK ${failed[*]}"

# --- 3. env file -------------------------------------------------------------

env_text=
for n in "${JDK_VERSIONS[@]}"; do
  [[ -n ${FOUND[$n]:-} ]] || continue
  env_text+="export JAVA${n}_HOME=$(printf '%q' "${FOUND[$n]}")"$'\n'
done
mkdir -p "$(dirname -- "$ENV_FILE")"
printf '%s' "$env_text" >"$ENV_FILE.tmp.$$"
mv -f "$ENV_FILE.tmp.$$" "$ENV_FILE"
log "wrote $ENV_FILE"
printf '%s' "$env_text"
