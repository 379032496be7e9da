#!/usr/bin/env bash
# Keep's CI action step (keep/README.md, "CI action"). Inputs arrive only as INPUT_* variables.
# Without INPUT_BINARY: check the version and RUNNER_ARCH, download the release asset over HTTPS
# into RUNNER_TEMP, verify its SHA-256 before making it executable (a mismatch deletes it and
# fails). The token goes to a fresh 0600 file written by the printf builtin (so it is in no
# process's arguments), the CA beside it; then `keep fetch … --format actions-env`.
set -euo pipefail
umask 077

fail() {
  printf 'keep action: %s\n' "$1" >&2
  exit 1
}

[[ -n "${RUNNER_TEMP:-}" && -d "$RUNNER_TEMP" ]] || fail "RUNNER_TEMP is not a directory"
[[ -n "${GITHUB_ENV:-}" ]] || fail "GITHUB_ENV is not set"
[[ -n "${INPUT_URL:-}" ]] || fail "the url input is required"
[[ -n "${INPUT_CA:-}" ]] || fail "the ca input is required"
[[ -n "${INPUT_TOKEN:-}" ]] || fail "the token input is required"

paths=()
read -r -d '' -a paths <<<"${INPUT_PATHS:-}" || true
((${#paths[@]} > 0)) || fail "the paths input is required"

work="$(mktemp -d "$RUNNER_TEMP/keep.XXXXXXXXXX")"
trap 'rm -rf -- "$work"' EXIT

if [[ -n "${INPUT_BINARY:-}" ]]; then
  keep="$INPUT_BINARY"
  if [[ "$keep" != */* ]]; then
    keep="$(command -v -- "$keep")" || fail "binary \"$INPUT_BINARY\" is not on PATH"
  fi
  [[ -f "$keep" && -x "$keep" ]] || fail "binary \"$INPUT_BINARY\" is not an executable file"
else
  version="${INPUT_VERSION:-}"
  [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "version must be vX.Y.Z (got \"$version\")"
  case "${RUNNER_ARCH:-}" in
    X64)
      asset="keep-linux-amd64"
      expected="${INPUT_SHA256_AMD64:-}"
      ;;
    ARM64)
      asset="keep-linux-arm64"
      expected="${INPUT_SHA256_ARM64:-}"
      ;;
    *) fail "unsupported RUNNER_ARCH \"${RUNNER_ARCH:-}\" (X64 or ARM64)" ;;
  esac
  expected="${expected,,}"
  [[ "$expected" =~ ^[0-9a-f]{64}$ ]] || fail "the sha256 input for $asset must be 64 hex characters"
  if [[ -n "${KEEP_RELEASE_BASE:-}" ]]; then
    base="${KEEP_RELEASE_BASE%/}"
  else
    [[ -n "${GITHUB_ACTION_REPOSITORY:-}" ]] || fail "cannot tell the action's repository (GITHUB_ACTION_REPOSITORY); set KEEP_RELEASE_BASE"
    base="https://github.com/$GITHUB_ACTION_REPOSITORY/releases/download"
  fi
  [[ "$base" == https://* ]] || fail "the release base must be https://"
  file="$work/$asset"
  if ! curl -fsSL --proto '=https' --proto-redir '=https' --tlsv1.2 -o "$file" "$base/$version/$asset"; then
    rm -f -- "$file"
    fail "downloading $asset $version failed"
  fi
  actual="$(sha256sum -- "$file")"
  actual="${actual%% *}"
  if [[ "$actual" != "$expected" ]]; then
    rm -f -- "$file"
    fail "SHA-256 mismatch for $asset $version (expected $expected, got $actual); the file was deleted"
  fi
  chmod 0700 -- "$file"
  keep="$file"
fi

token_file="$work/token"
ca_file="$work/ca.pem"
set -o noclobber
printf '%s\n' "$INPUT_TOKEN" >"$token_file"
printf '%s\n' "$INPUT_CA" >"$ca_file"
set +o noclobber
# keep reads the token from the file; it need not inherit it.
unset INPUT_TOKEN

args=(fetch --url "$INPUT_URL" --ca "$ca_file" --token-file "$token_file")
for p in "${paths[@]}"; do
  args+=(--path "$p")
done
args+=(--format actions-env --github-env "$GITHUB_ENV")

status=0
"$keep" "${args[@]}" || status=$?
exit "$status"
