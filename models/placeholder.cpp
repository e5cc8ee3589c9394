// Placeholder so the library has a source until models/ gains code; delete when it does.
