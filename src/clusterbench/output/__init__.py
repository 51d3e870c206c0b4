"""What clusterbench prints goes through here: the console tables are printed
on, and a user's strings made safe for each output format."""
