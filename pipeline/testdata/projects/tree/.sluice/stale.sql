not a library
