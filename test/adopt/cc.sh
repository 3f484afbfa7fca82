cc -o app app.c -pthread
