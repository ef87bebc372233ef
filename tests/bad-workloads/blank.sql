-- the team will write its claim here
/* not yet */
