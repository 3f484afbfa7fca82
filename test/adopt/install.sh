meson setup build -Dtests=false -Dbench=false
meson install -C build
