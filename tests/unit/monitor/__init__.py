"""generator/monitor/: the monitor's parts on their own: the witnesses' views read and compared."""
