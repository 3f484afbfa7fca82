cc -o app app.c $(pkg-config --cflags --libs hwtimer)
