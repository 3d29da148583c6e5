"""Deployment targets: what each runtime accepts, as data with sources."""
