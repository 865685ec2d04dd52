# Sourced by the scripts that time or measure the release binary (after
# `set -euo pipefail`): moves to the repository's root, builds the release
# binary, and sets `bin` to its path and `work` to a temporary folder that
# is removed when the script exits.
#
#     source "$(dirname "$0")/release_gradcalc.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet --release --bin gradcalc
bin=target/release/gradcalc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
