# man: the manual pages, and the checks that keep them honest.
dist_man_MANS += man/tent.7 man/tent.conf.5 man/tent-run.1
# Their checks (every page groff-clean; tent.conf(5) documents every knob of
# the table with its default, range and names) are registered in tests/local.mk.
