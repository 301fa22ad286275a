# include: the public C API header and its manual page.
tentinclude_HEADERS += include/tent/tent.h
dist_man_MANS += man/tent.3
