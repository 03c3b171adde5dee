// Placeholder: the strategy search.
