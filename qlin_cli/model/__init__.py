"""Reading models: loading without weights, reading single tensors safely, walking graphs."""
