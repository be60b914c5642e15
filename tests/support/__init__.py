"""What the tests share: packet builders, strategies, the schema oracle, the vectors as
parameters, and the one way to run the command line (``cli``)."""
