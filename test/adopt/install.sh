meson setup build --prefix="$HOME/.local" -Dtests=false -Dbench=false
meson install -C build
