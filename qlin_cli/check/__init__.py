"""`qlin check`: run the rules over every Q/DQ node of a model."""
