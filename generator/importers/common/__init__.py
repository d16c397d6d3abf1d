"""What every importer shares, whatever the harness: the mapping file's common keys (task, model, item,
fields, similarity, judge labels, exclusions), the reading of an item's fields and judge labels from the
sources a mapping names, the run an import is for, and the results file written whole or not at all.
"""
