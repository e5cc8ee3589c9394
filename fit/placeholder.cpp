// Placeholder so the library has a source until fit/ gains code; delete when it does.
