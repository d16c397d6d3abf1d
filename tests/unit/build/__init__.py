"""generator/build/: how a release is written; here, the writer's pruning of a reused staging folder."""
