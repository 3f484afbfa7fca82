cmake_minimum_required(VERSION 3.14)
project(app C)
find_package(hwtimer CONFIG REQUIRED) # cmake -DCMAKE_PREFIX_PATH="$HOME/.local"
add_executable(app app.c)
target_link_libraries(app PRIVATE hwtimer::hwtimer)
