export PKG_CONFIG_PATH="$HOME/.local/lib/x86_64-linux-gnu/pkgconfig"
cc -o app app.c $(pkg-config --cflags --libs hwtimer)
