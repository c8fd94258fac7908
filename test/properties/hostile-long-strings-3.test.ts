import { longStringsShard } from './hostile-long-strings.js';

longStringsShard(2, 3);
