"""Runs published by other harnesses (OSWorld's result folders, ScreenSpot-Pro's result files), read into guitest reports and written as they publish."""
