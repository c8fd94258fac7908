import { longStringsShard } from './hostile-long-strings.js';

longStringsShard(1, 3);
