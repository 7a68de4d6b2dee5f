#!/bin/sh
# A linker for -pgml: notes that it ran, then links with gcc.
echo "logging-ld ran" >> "$LOGGING_LD"
exec gcc "$@"
