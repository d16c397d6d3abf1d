"""Every command of `transparency`, one module each, usable without click: each takes the program's
directories and its arguments, does its work through the layers below (a program's files, the
build, the programs of their own) and returns what happened for the command line to print. The
build's steps are here too (`build_steps`): the one module that joins the build's artifacts and
the site's pages. The top layer: a command may import every other folder of the generator.
"""
