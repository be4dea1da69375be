# Turns a text file into a C string: cmake -DINPUT=f -DOUTPUT=f.c -DNAME=sym -P embed.cmake
# (so the HTML report's page stays a readable file, cli/report/report.html).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}" "/* generated from ${INPUT} by cli/report/embed.cmake: do not edit */\nconst char ${NAME}[] = {${bytes}0x00};\n")
