# Build the C operator with meson into $1 (default build/), configuring it once.
# Extra arguments go to `meson setup` (for example -Db_sanitize=address,undefined).
build_operator() {
	local dir=${1:-$DRASHIFT_ROOT/build}; shift || true
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$DRASHIFT_ROOT" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log" >&2; die "meson setup $dir failed"; }
		rm -f "$dir.setup.log"
	elif [ $# -gt 0 ]; then
		meson configure "$dir" "$@" >/dev/null || die "meson configure $dir $* failed"
	fi
	meson compile -C "$dir" >"$dir/compile.log" 2>&1 ||
		{ cat "$dir/compile.log" >&2; die "build in $dir failed"; }
}
