# Sourced by scripts/serve and scripts/test: make .venv hold the project and the given extras.
# Reinstalls only when setup.cfg, pyproject.toml or the extras change, so later runs start at once.

ensure_venv() {
    local extras="$1"
    local python="${PYTHON:-python3}"
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "browser-mcp needs Python 3.11 or newer as '$python' (set PYTHON=/path/to/python3.11)" >&2
        exit 1
    fi
    if [ ! -x .venv/bin/python ]; then
        echo "creating .venv ..." >&2
        "$python" -m venv .venv
    fi
    local hash
    hash=$(cat setup.cfg pyproject.toml | sha256sum | cut -c1-16)
    local stamp=".venv/.installed-${hash}-${extras//[^a-z,]/}"
    if [ ! -f "$stamp" ]; then
        echo "installing browser-mcp${extras} into .venv ..." >&2
        .venv/bin/python -m pip install --quiet --upgrade pip >&2
        .venv/bin/python -m pip install --quiet -e ".${extras}" >&2
        find .venv -maxdepth 1 -name '.installed-*' ! -name ".installed-${hash}-*" -delete
        touch "$stamp"
    fi
}
