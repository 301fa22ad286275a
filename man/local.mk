# man: the manual pages.
