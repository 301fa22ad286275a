# man: the manual pages, and the checks that keep them honest.
dist_man_MANS += man/tent.7 man/tent.conf.5 man/tent-run.1

# make check: every man page is groff-clean; tent.conf(5) documents every
# knob of the table with its default, range and names.
dist_check_SCRIPTS += tests/man/check-man-pages.sh
TESTS += tests/man/check-man-pages.sh
if ENABLE_TESTS
check_PROGRAMS += tests/man/test_tent_conf_doc
TESTS += tests/man/test_tent_conf_doc
tests_man_test_tent_conf_doc_SOURCES = tests/man/test_tent_conf_doc.cpp
tests_man_test_tent_conf_doc_CPPFLAGS = $(TEST_CFLAGS)
tests_man_test_tent_conf_doc_LDADD = $(TEST_LIBS)
endif
