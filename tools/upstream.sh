# The two upstream bases of the series, sourced by the scripts that prepare
# a tree, write the series or check it (top must be set).
#
# UPSTREAM   9.0.2 (the default) or master
# A base is the pinned release tarball, the pinned master snapshot
# (MASTER_COMMIT) or a developer's own master checkout: a git work tree,
# of which HEAD is taken (uncommitted changes are not).
#
# One set of sources serves both: our whole files are the same; a quilt
# patch whose hunks do not apply to master has a master variant of the same
# name in patches/master/, taken instead of patches/NAME on master; a line of
# tools/series.txt that starts with [9.0.2] or [master] counts on that base
# only.

UPSTREAM=${UPSTREAM:-9.0.2}
MASTER_COMMIT=${MASTER_COMMIT:-45bc2518}   # configure's MASTER_COMMIT
case $UPSTREAM in
9.0.2|master) ;;
*) echo "UPSTREAM=$UPSTREAM: the bases are 9.0.2 and master" >&2; exit 1 ;;
esac

# The file of quilt patch NAME on this base.
base_patch() {
    if [ "$UPSTREAM" = master ] && [ -f "$top/patches/master/$1" ]; then
        echo "$top/patches/master/$1"
    else
        echo "$top/patches/$1"
    fi
}

# The patches of patches/series, one a line.
base_series() {
    sed -e 's/#.*//' -e '/^ *$/d' "$top/patches/series"
}

# A folder quilt can use for this base: DIR/series and a link per patch.
base_patch_dir() {
    dir=$1
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$top/patches/series" "$dir/series"
    for p in $(base_series); do
        ln -s "$(base_patch "$p")" "$dir/$p"
    done
}

# What identifies BASE: a tarball's path, a work tree's HEAD.
base_id() {
    if [ -d "$1" ]; then
        echo "git $(git -C "$1" rev-parse HEAD)"
    else
        echo "tarball $1"
    fi
}

# Unpack BASE (a tarball, or a git work tree's HEAD) into the folder DEST.
base_unpack() {
    src=$1 dest=$2
    if [ ! -d "$src" ]; then
        tar -xJf "$src" -C "$dest" --strip-components=1
        return
    fi
    head=$(git -C "$src" rev-parse --verify -q HEAD) || {
        echo "$src is not a git work tree with a commit" >&2
        return 1
    }
    case $head in
    "$MASTER_COMMIT"*) ;;
    *) echo "warning: $src is at $(echo "$head" | cut -c1-10), not" \
            "$MASTER_COMMIT, where the master series is made and tested" >&2 ;;
    esac
    git -C "$src" archive --format=tar HEAD | tar -x -C "$dest"
}
